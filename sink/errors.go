package sink

import "errors"

// ErrInvalidConfig is wrapped by every error that [New] returns. Each such
// error names the field and the value that it rejects; when several fields
// are invalid, all of them are reported, one per line, and errors.Is(err,
// ErrInvalidConfig) holds for the joined error.
var ErrInvalidConfig = errors.New("sink: invalid config")

// ErrShutdown is returned by [Sink.Flush] when the workers have stopped,
// because [Sink.Shutdown] was called, before everything the flush waits for
// was drained: a Shutdown whose ctx ended left values in the rings, which
// only a later Shutdown drains.
var ErrShutdown = errors.New("sink: workers have shut down")

// ErrCalledFromDrain is returned at once by [Sink.Flush] and [Sink.Shutdown]
// when they are called with the ctx that a Drain call of the same sink
// received, or with a ctx derived from it. Such a call would wait for the
// batch that its own Drain call holds, and so for ever, or until its ctx
// ends. Shutdown does nothing then: the sink keeps running, and a later
// Shutdown from outside Drain does the work.
var ErrCalledFromDrain = errors.New("sink: Flush or Shutdown called with the ctx of a Drain call")
