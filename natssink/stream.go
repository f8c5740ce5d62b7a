package natssink

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrStreamUnsuitable is wrapped by the error of [New] when the stream
// that would store the values is missing or cannot keep the sink's
// promises: it does not ack (NoAck), or its duplicate window is shorter
// than a value's retries last (RetryBudget + AckTimeout), so that a retry
// of a value it already has would be stored twice.
var ErrStreamUnsuitable = errors.New("natssink: the stream does not suit the sink")

// expectedStreamHeader names the stream a publish must be stored by.
const expectedStreamHeader = "Nats-Expected-Stream"

// streamCheckTimeout bounds each JetStream API call of New's check.
const streamCheckTimeout = 5 * time.Second

// checkStream checks the stream the sink's values go to: Config.Stream if
// set, else the stream that captures Config.Subject; with neither (a
// SubjectOf and no Stream) there is nothing to check.
//
// It reports whether the stream allows fast batches (allow_batched).
func checkStream(js jetstream.JetStream, name, subject string, horizon time.Duration) (batched bool, err error) {
	if name == "" && subject == "" {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), streamCheckTimeout)
	defer cancel()
	if name == "" {
		n, err := js.StreamNameBySubject(ctx, subject)
		switch {
		case errors.Is(err, jetstream.ErrStreamNotFound):
			return false, fmt.Errorf("%w: no stream captures the Subject %q: create it before New", ErrStreamUnsuitable, subject)
		case err != nil:
			return false, fmt.Errorf("natssink: looking up the stream that captures %q (set SkipStreamCheck to start while JetStream does not answer): %w", subject, err)
		}
		name = n
	}
	st, err := js.Stream(ctx, name)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		return false, fmt.Errorf("%w: Stream = %q: no such stream", ErrStreamUnsuitable, name)
	case err != nil:
		return false, fmt.Errorf("natssink: the info of the stream %q (set SkipStreamCheck to start while JetStream does not answer): %w", name, err)
	}
	cfg := st.CachedInfo().Config
	if subject != "" {
		// A stream with no subjects takes the one of its name.
		filters := cfg.Subjects
		if len(filters) == 0 {
			filters = []string{cfg.Name}
		}
		if !captures(filters, subject) {
			return false, fmt.Errorf("%w: Stream = %q does not capture the Subject %q (its subjects: %q): every value would be refused",
				ErrStreamUnsuitable, name, subject, filters)
		}
	}
	if cfg.NoAck {
		return false, fmt.Errorf("%w: the stream %q does not ack (NoAck): every value would time out and fail", ErrStreamUnsuitable, name)
	}
	if cfg.Duplicates < horizon {
		return false, fmt.Errorf("%w: the stream %q recognises a duplicate within %v (Duplicates, capped by the server at MaxAge %v), "+
			"shorter than a value's retries may last (RetryBudget + AckTimeout = %v): a late retry would be stored twice; "+
			"raise the stream's Duplicates or lower RetryBudget",
			ErrStreamUnsuitable, name, cfg.Duplicates, cfg.MaxAge, horizon)
	}
	return cfg.AllowBatchPublish, nil
}
