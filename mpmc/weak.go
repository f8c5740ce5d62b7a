package mpmc

import "sync/atomic"

// WeakSender refers to a channel without being counted among its senders:
// it does not keep the channel open, and it cannot send. [WeakSender.Upgrade]
// turns it back into a [Sender] while the channel is open. It is safe for
// concurrent use and needs no Release. Get one from [Sender.Downgrade].
type WeakSender[T any] struct {
	c *channel[T]
}

// Upgrade returns a new, counted Sender of the channel, or nil and false
// once the channel is closed (by Close or by a last Release) or has no
// sender left. The Sender returned must be released like any other.
func (w *WeakSender[T]) Upgrade() (*Sender[T], bool) {
	c := w.c
	if c == nil {
		panicZero("WeakSender")
	}
	if !upgrade(&c.senders, c) {
		return nil, false
	}
	if c.isClosed() {
		// Closed between the first check and the increment: the upgrade
		// fails, and the count it took is given back as a Release would.
		c.releaseSender()
		return nil, false
	}
	return newSender(c), true
}

// WeakReceiver refers to a channel without being counted among its
// receivers: it does not keep the channel open, and it cannot receive.
// [WeakReceiver.Upgrade] turns it back into a [Receiver] while the channel is
// open. It is safe for concurrent use and needs no Release. Get one from
// [Receiver.Downgrade].
type WeakReceiver[T any] struct {
	c *channel[T]
}

// Upgrade returns a new, counted Receiver of the channel, or nil and false
// once the channel is closed (by Close or by a last Release) or has no
// receiver left. The Receiver returned must be released like any other.
func (w *WeakReceiver[T]) Upgrade() (*Receiver[T], bool) {
	c := w.c
	if c == nil {
		panicZero("WeakReceiver")
	}
	if !upgrade(&c.receivers, c) {
		return nil, false
	}
	if c.isClosed() {
		// As in WeakSender.Upgrade. If this was the last receiver, the
		// release drains the channel, as the last Release must.
		c.releaseReceiver()
		return nil, false
	}
	return newReceiver(c), true
}

// upgrade adds one to count unless the channel is closed or count is 0; a
// count that reached 0 has closed the channel and must never rise again.
func upgrade[T any](count *int64, c *channel[T]) bool {
	if c.isClosed() {
		return false
	}
	for {
		n := atomic.LoadInt64(count)
		if n == 0 {
			return false
		}
		if atomic.CompareAndSwapInt64(count, n, n+1) {
			return true
		}
	}
}
