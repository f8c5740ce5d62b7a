package mpmc

import "sync/atomic"

// This file is readiness: a Go channel that a worker can select on beside
// its other channels (a ticker, a shutdown channel, a second mpmc
// channel), and that tells it when a value may be taken, for TryRecv or
// RecvMany to take it.
//
// # The signal
//
// The channel has one readiness channel, readyCh, with a buffer of one,
// shared by all of its receivers and made by the first Receiver.Ready. A
// token in its buffer says "a value may be there". The token is
// edge-triggered and coalesced: a push puts one in unless one is already
// there, and the receiver that takes it is the one woken. The rule that
// keeps a selecting worker from sleeping while a value waits (the one
// elastic/beats#52358 names for a ReadyChan beside TryGet):
//
//   - After every push (Send, TrySend, ForceSend, a receive that pushes a
//     parked sender's value) a token is put in, unless one is there.
//   - After every receive that leaves values behind (the queue's Len is
//     not 0 after the pop), a token is put in, unless one is there: the
//     re-arm. So a worker that takes a token and receives one value leaves
//     a token for the next value, for itself or for another worker.
//   - Once the channel is closed, a token is put in at the close, and by
//     every receive after it (one that takes a value left, or reports
//     ErrClosed), so that every worker selecting on it learns of the close
//     through TryRecv in turn. A receive that takes a value must re-arm
//     on a closed channel even when it takes the last one: the token it
//     took may be the close's, coalesced with the last send's (the
//     selecting-worker test lost its close exactly so).
//   - The Release of a Receiver that is not the last puts a token in when
//     values are left: a goroutine that took a token and then released its
//     end without receiving passes the token on.
//
// Why no value waits unseen: take a value v in the queue. Its push was
// followed by a try to put a token. Either the try put one in, or a token
// was there already; in both cases a token was in the buffer after v's
// push, and whoever takes that token receives after v's push. That receive
// either takes a value and then, if v is still there, finds Len at least 1
// and re-arms (a token again, after v's push), or finds the queue empty,
// which means that v was taken. By induction, while v is in the queue a
// token is in the buffer or a receive that will re-arm for it is under
// way; the only way out is v's receipt. A token can be taken by a worker
// that then finds nothing (another receiver took the value): TryRecv says
// ErrEmpty and the worker waits again. That is the whole promise: a
// signal says a value may be there, never that it is there for this
// worker.
//
// # What it costs
//
// Nothing until the first Ready: the bit armed rides in the two words that
// every send and every receive already loads after its operation
// (recvq.waiting, which a send loads to see whether receivers wait, and
// sendq.waiting, which a receive loads to see whether senders wait). With
// nobody waiting and no readiness those words are 0, and the hot paths
// test them against 0 as before: not one load more. The one change a
// Send makes is that its first test, for a receiver to hand its value to,
// masks the bit off. Once armed (for good: the bit is never cleared), a
// send costs a non-blocking send on readyCh more, and a receive a Len of
// the queue and, when values are left, a non-blocking send.
//
// The bit is set under the queue's lock, because unlink updates waiting
// with a load and a store under that lock (not a read-modify-write), which
// would overwrite a bit set without it. It is set by a sequentially
// consistent read-modify-write, so that it takes part in the Dekker
// argument of waiters.go: a push whose load of recvq.waiting did not see
// the bit came before the arming in the one order of atomics, so Ready's
// check of Len after arming sees its value and puts a token in.

// armed is the bit of recvq.waiting and sendq.waiting that says readiness
// was asked for: the count of waiters is in the other bits.
const armed = 1 << 63

// Ready returns the channel's readiness channel: a receive from it
// succeeds when a value may be taken, for [Receiver.TryRecv] or
// [Receiver.RecvMany], which is what a select beside other channels needs:
//
//	for {
//		select {
//		case <-rx.Ready():
//			v, err := rx.TryRecv()
//			if err == mpmc.ErrEmpty {
//				continue // another receiver took it: wait again
//			}
//			if err != nil {
//				return // ErrClosed: closed and empty
//			}
//			handle(v)
//		case <-ticker.C:
//			tick()
//		}
//	}
//
// What a signal promises: the receiver that takes it is woken once after
// a send (several sends before it runs make one signal: they coalesce),
// and a receive that leaves values behind signals again, so a worker that
// takes a signal and then one value is signalled again for the next: no
// worker that selects on Ready sleeps while a value waits in the channel.
// Once the channel is closed it is signalled at the close and after every
// receive (of a value left, or one that reports ErrClosed), so a worker
// selecting on Ready alone
// learns of the close from TryRecv. What it does not promise: that the
// value is still there. Every Receiver of the channel (all its clones
// share one readiness channel, and one signal wakes one of them), and a
// Recv or TryRecv that never looked at Ready, may take it first: TryRecv
// then reports [ErrEmpty], and the worker waits again. A value handed
// directly to a goroutine waiting in Recv never signals.
//
// A goroutine that takes a signal should receive (TryRecv, RecvMany) or
// release its Receiver: the Release of a Receiver passes a signal on when
// values are left. One that takes a signal and does neither may leave a
// value unsignalled until the next send.
//
// Cost: the first call makes the readiness channel and arms the channel
// for good. Until then Send and Recv pay nothing for readiness (the bit
// rides in a word they load anyway); from then on, each send does a
// non-blocking send on the readiness channel, and each receive reads the
// channel's length and, when values are left, does one too. Later calls
// of Ready cost one atomic load. The measurements are in docs/benchmarks.md
// ("mpmc readiness").
func (r *Receiver[T]) Ready() <-chan struct{} { return r.ch().ready() }

// ready is Ready: it arms the channel on the first call.
func (c *channel[T]) ready() <-chan struct{} {
	// The armed bit of sendq.waiting is set last, after readyCh is written
	// and recvq's bit set: seeing it (an atomic load, which synchronises
	// with the read-modify-write that set it) orders readyCh's write before
	// this read.
	if atomic.LoadUint64(&c.sendq.waiting)&armed != 0 {
		return c.readyCh
	}
	q := &c.recvq
	q.mu.Lock()
	defer q.mu.Unlock()
	if c.readyCh != nil {
		return c.readyCh // armed by another call, under this lock
	}
	c.readyCh = make(chan struct{}, 1)
	// From here every push signals.
	atomic.OrUint64(&q.waiting, armed)
	// From here every receive that leaves values re-arms. sendq's lock,
	// taken inside recvq's only here, guards its waiting word the same way.
	c.sendq.mu.Lock()
	atomic.OrUint64(&c.sendq.waiting, armed)
	c.sendq.mu.Unlock()
	// Values pushed before the arming, and receives that did not re-arm
	// before it: one check after both bits covers them (see the file
	// comment), and a close that came before it.
	if c.leftForReady() {
		c.signalReady()
	}
	return c.readyCh
}

// signalReady puts a token in readyCh unless one is there. Only a caller
// that saw the armed bit calls it.
func (c *channel[T]) signalReady() {
	select {
	case c.readyCh <- struct{}{}:
	default: // coalesced: a token is there, and its taker receives after us
	}
}

// leftForReady reports whether a receiver that may have taken the
// readiness token must put one back: values are left, or the channel is
// closed (so that the next worker learns it from its TryRecv). Its load of
// closed pairs with close's store of it before its signal: a receive that
// read closed as 0 came before that store, so the close's own signal
// comes after this receive has taken its token.
func (c *channel[T]) leftForReady() bool {
	return c.q.Len() > 0 || atomic.LoadUint32(&c.closed) != 0
}

// isArmed reports whether readiness was asked for; for the cold paths
// (close, ErrClosed, Release), where one load more does not matter.
func (c *channel[T]) isArmed() bool { return atomic.LoadUint64(&c.sendq.waiting)&armed != 0 }

// pushedSlow runs after n successful pushes whose load of recvq.waiting
// returned w, not 0: it signals readiness and wakes up to n waiting
// receivers, as the bits of w ask.
func (c *channel[T]) pushedSlow(w uint64, n int) {
	if w&armed != 0 {
		c.signalReady()
	}
	if w&^armed != 0 {
		c.recvq.notifySlow(n)
	}
}

// poppedSlow runs after n successful pops whose load of sendq.waiting
// returned w, not 0: it wakes up to n senders waiting for room, and
// re-arms readiness when values are left.
func (c *channel[T]) poppedSlow(w uint64, n int) {
	if w&^armed != 0 {
		c.wakeSenders(n)
	}
	// After the pop, and after any push that wakeSenders did for a parked
	// sender (which signalled itself): a value still in the queue is one
	// that the token this receiver may have taken was for; and once the
	// channel is closed, the token may have been the close's, coalesced
	// with a send's (see the file comment).
	if w&armed != 0 && c.leftForReady() {
		c.signalReady()
	}
}
