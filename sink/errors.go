package sink

import "errors"

// ErrInvalidConfig is wrapped by every error that [New] returns. Each such
// error names the field and the value that it rejects; when several fields
// are invalid, all of them are reported, one per line, and errors.Is(err,
// ErrInvalidConfig) holds for the joined error.
var ErrInvalidConfig = errors.New("sink: invalid config")

// ErrShutdown is returned by [Sink.Flush] when the workers have stopped,
// because [Sink.Shutdown] was called, before everything the flush waits for
// was drained. Values pushed after Shutdown are accepted (there is no closed
// state) but nothing drains them.
var ErrShutdown = errors.New("sink: workers have shut down")
