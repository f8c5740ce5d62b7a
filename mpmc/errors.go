package mpmc

import "errors"

// The errors that the channel operations return. Compare with errors.Is. A
// Send, Recv or RecvMany that gives up because its context ended returns
// ctx.Err() instead, unwrapped.
var (
	// ErrClosed is returned by a send on a closed channel (the value stays
	// with the caller), and by a receive on a channel that is closed and
	// has no value left.
	ErrClosed = errors.New("mpmc: channel is closed")

	// ErrFull is returned by [Sender.TrySend] when a bounded channel holds
	// as many values as its capacity. The value stays with the caller.
	ErrFull = errors.New("mpmc: channel is full")

	// ErrEmpty is returned by [Receiver.TryRecv] when the channel holds no
	// value but is not closed.
	ErrEmpty = errors.New("mpmc: channel is empty")
)
