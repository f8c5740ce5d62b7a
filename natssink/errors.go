package natssink

import (
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// ErrInvalidConfig is wrapped by every error that [New] returns for a bad
// argument. Each such error names the field and the value it rejects; when
// several are bad, all are reported, one per line, and errors.Is(err,
// ErrInvalidConfig) holds for the joined error.
var ErrInvalidConfig = errors.New("natssink: invalid config")

// ErrAckTimeout is the reason of an attempt whose ack did not come within
// [Config.AckTimeout]: the value may or may not be in the stream, so it is
// published again (with the same Nats-Msg-Id) while the retry budget lasts.
// It wraps nats.ErrTimeout.
var ErrAckTimeout = fmt.Errorf("natssink: no ack within AckTimeout: %w", nats.ErrTimeout)

// ErrEncodePanicked is the reason of a value whose Encode, SubjectOf,
// MsgIDOf or HeadersOf panicked (or called runtime.Goexit); the value is
// counted as failed and the worker goes on.
var ErrEncodePanicked = errors.New("natssink: Encode or SubjectOf panicked")

// ErrShutdown is the reason of a value that [Sink.Shutdown] gave up on
// because its ctx ended: one still awaiting its ack or a retry, or one
// that a later Shutdown took from a ring (that one is not published).
var ErrShutdown = errors.New("natssink: given up by Shutdown")

// failure is the reason a value was counted as failed, with what it took.
type failure struct {
	subject  string
	attempts int
	elapsed  time.Duration
	err      error
}

func (f *failure) Error() string {
	if f.attempts == 0 {
		if f.subject == "" {
			return fmt.Sprintf("natssink: a value was not published: %v", f.err)
		}
		return fmt.Sprintf("natssink: a value for %q was not published: %v", f.subject, f.err)
	}
	return fmt.Sprintf("natssink: gave up on a value for %q after %d attempt(s) in %v: %v",
		f.subject, f.attempts, f.elapsed.Round(time.Millisecond), f.err)
}

func (f *failure) Unwrap() error { return f.err }
