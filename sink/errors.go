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
// only a later Shutdown drains. [Handle.PushWait] and [Sink.PushWait]
// return it, and count their value as dropped, once Shutdown has begun:
// at once, and to every caller already waiting.
var ErrShutdown = errors.New("sink: workers have shut down")

// ErrCalledFromDrain is returned at once by [Sink.Flush] and [Sink.Shutdown]
// when they are called with the ctx that a Drain call of the same sink
// received, or with a ctx derived from it. Such a call would wait for the
// batch that its own Drain call holds, and so for ever, or until its ctx
// ends. Shutdown does nothing then: the sink keeps running, and a later
// Shutdown from outside Drain does the work.
var ErrCalledFromDrain = errors.New("sink: Flush or Shutdown called with the ctx of a Drain call")

// ErrValueTooLarge is returned at once by [Handle.PushWait] and
// [Sink.PushWait] for a value whose size (Config.SizeOf) is above its
// shard's share of Config.MaxQueuedBytes when the shard is not empty: such
// a value goes in only alone, and a wait for its shard to empty could last
// for ever. The value is dropped and counted in Dropped and
// DroppedForBytes.
var ErrValueTooLarge = errors.New("sink: value larger than its shard's share of MaxQueuedBytes")
