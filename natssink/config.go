package natssink

import (
	"cmp"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"
	"unicode"

	"github.com/nats-io/nats.go"

	"github.com/shardedsink/shardedsink/internal/fielderr"
	"github.com/shardedsink/shardedsink/sink"
)

// The defaults that the zero value of each [Config] field stands for.
const (
	DefaultName = "natssink"
	// DefaultMaxInFlight holds about 13 s of values at 20,000 values/s:
	// a leader election (4-9 s) and a reconnect fit in it.
	DefaultMaxInFlight = 1 << 18
	// DefaultMaxInFlightBytes bounds the payloads in flight at 64 MiB.
	DefaultMaxInFlightBytes = 64 << 20
	DefaultAckTimeout       = 5 * time.Second // nats.go's JetStream default
	// DefaultAttempts, 0, sets no bound on the attempts: RetryBudget ends
	// the retries.
	DefaultAttempts     = 0
	DefaultRetryBudget  = 30 * time.Second
	DefaultRetryBackoff = 100 * time.Millisecond

	// MaxMaxInFlight is the largest MaxInFlight that New accepts.
	MaxMaxInFlight = 1 << 22
	// MaxDuration is the longest AckTimeout, RetryBudget and RetryBackoff
	// that New accepts, so that no sum or doubling of them overflows.
	MaxDuration = 24 * time.Hour
	// maxBackoffFactor bounds the doubling backoff at this many times
	// RetryBackoff.
	maxBackoffFactor = 16
)

// Config configures a [Sink]. The zero value of every field but Encode and
// Subject (or SubjectOf) means its default; negative sizes and durations
// are errors.
type Config[T any] struct {
	// Subject is the subject every value is published to; a stream must
	// capture it. Required unless SubjectOf is set; not both.
	Subject string
	// Stream, optional, is the stream that must store the values: each
	// publish carries it as Nats-Expected-Stream (a server whose stream
	// of that subject is another refuses the value: counted as failed),
	// and New checks it instead of the stream that captures Subject.
	Stream string
	// SkipStreamCheck turns off New's check of the stream (that it
	// exists, acks, and recognises duplicates for as long as a value is
	// retried): for a sink started while JetStream does not answer.
	SkipStreamCheck bool
	// SubjectOf returns the subject of one value, for routing by content.
	// It runs on the drain workers, once per value (not again on a retry).
	// A value whose subject is not a valid subject fails (counted, not
	// retried).
	SubjectOf func(v T) string
	// Encode appends the payload of v to dst and returns the extended
	// slice, as strconv.AppendInt or json.MarshalAppend-style encoders do.
	// Required. dst is a buffer the sink reuses for one publish at a time:
	// keep no reference to it. An error, or a panic, counts the value as
	// failed with that reason (not retried).
	Encode func(dst []byte, v T) ([]byte, error)

	// MsgIDOf, optional, returns the Nats-Msg-Id of one value, in place
	// of the sink's own (its NUID and a sequence number): an id the
	// caller keeps (an event id), so that the stream recognises the same
	// value pushed twice, by this sink or another, within its duplicate
	// window. It runs on the drain workers, once per value; an empty id
	// fails the value (counted, not published). Required with
	// Sink.Spill: the ids that survive a restart.
	MsgIDOf func(v T) string
	// HeadersOf, optional, returns headers for one value's message (a
	// traceparent, say). It runs on the drain workers, once per value; the
	// sink keeps the header's value slices until the value is settled
	// (retries send them again): do not change them after returning them.
	// Nats-Msg-Id and Nats-Expected-Stream are the sink's and override the
	// same keys in the result. It costs each value a clearing and filling
	// of its slot's header.
	HeadersOf func(v T) nats.Header

	// MaxInFlight is the most values published and not yet acknowledged
	// (awaiting an ack or a retry), over all the drain workers. A worker
	// that finds it (or MaxInFlightBytes) reached waits for an ack;
	// producers never wait on it: the rings fill and pushes are shed and
	// counted (sink's "What a push waits for"). It is what an outage can hold before the rings fill:
	// default 262,144 (1<<18), about 13 s at 20,000 values/s; at most
	// [MaxMaxInFlight]. Slots are allocated 1,024 at a time as the load
	// first needs them: a value in flight costs about 1 KiB of heap with
	// a 195-byte payload (its slot, nats.go's header, its buffers;
	// TestASlotInFlightCostsAbout1KiB), and a free slot keeps its payload
	// buffer up to 4 KiB. A sink that holds the default bound in an outage
	// takes about 256 MiB while it does: size MaxInFlight to the outage it
	// must ride out at the rate it takes. The slots that no value in
	// flight uses any more are given back within about 20 s (two
	// rounds of 10 s) of the backlog clearing.
	MaxInFlight int
	// MaxInFlightBytes is the most payload bytes of the values in flight:
	// with MaxInFlight, the bound on the values an outage holds, so that
	// large values do not multiply it. Default 64 MiB (about 340,000
	// values of 195 bytes: MaxInFlight binds first). It may be passed by
	// one value per drain worker.
	MaxInFlightBytes int
	// AckTimeout is how long one attempt waits for the stream's ack before
	// the value is published again. Default 5 s; at most [MaxDuration].
	AckTimeout time.Duration
	// Attempts is the most times one value is published, the first time
	// included; 1 turns retries off. Default: no bound but RetryBudget,
	// which is what rides out an outage (a count of attempts ends in
	// about a second with quick refusals, an election takes 4-9 s).
	Attempts int
	// RetryBudget is the most time from a value's first publish to the
	// start of its last retry; the last attempt then waits up to
	// AckTimeout for its ack, so a value fails at most RetryBudget +
	// AckTimeout (35 s by default) after its first publish. Default 30 s;
	// at most [MaxDuration]. New refuses a stream whose duplicate window
	// (jetstream.StreamConfig.Duplicates, default 2 min, capped by the
	// server at MaxAge) is shorter than RetryBudget + AckTimeout: within
	// it a retry of a value the stream already has is recognised by its
	// Nats-Msg-Id and stored once.
	RetryBudget time.Duration
	// RetryBackoff is the wait before the first retry after an error (a
	// refusal by the stream, no stream answering, a publish the client
	// could not take); it doubles with each retry, up to 16 times
	// RetryBackoff, and each wait is drawn between half and all of it.
	// A retry after an ack timeout does not wait. Default 100 ms; at most
	// [MaxDuration].
	RetryBackoff time.Duration
	// FastBatches says whether the drain workers publish one message per
	// value (FastBatchesOff, the default) or each batch they take as one
	// JetStream fast-ingest batch where the stream allows it
	// (FastBatchesAuto; pair it with a Sink.BatchSize of about 1,024). See
	// the package documentation, Fast batches.
	FastBatches FastBatches
	// OnError receives the reasons values failed, at most once a second
	// (and once more at Shutdown for the failures not yet reported): a
	// *[FailureReport] that counts the failures since the previous call and
	// wraps the reason of the last one (errors.Is finds ErrAckTimeout,
	// jetstream.ErrNoStreamResponse, a *jetstream.APIError, an Encode
	// error, ...). It is never given a payload. It runs on a goroutine of
	// its own, one call at a time: one that blocks delays only the later
	// reports (their failures add up into the next), never a retry, and
	// Shutdown waits for the last report only until its ctx ends. A panic
	// in it is recovered and logged. Default: an Error record through
	// Sink.Logger.
	OnError func(error)

	// Sink holds the knobs of the sink under the publisher, with
	// [sink.Config]'s meanings and defaults but Name's, "natssink": its
	// rings and shards, the batches its drain workers take (each value of
	// a batch becomes one message), the overload reports, the hand-off.
	// Its Name also labels this sink's stats and failure reports, and its
	// Logger receives the default failure reports. Its byte bound
	// (SizeOf, MaxQueuedBytes) is on the rings; MaxInFlightBytes bounds
	// the encoded values in flight. Its Spill puts a directory on disk
	// behind the rings, for an outage longer than MaxInFlight and the
	// rings hold; it needs MsgIDOf (see the package documentation,
	// Spilling to disk).
	Sink sink.Config[T]
}

// settings is a Config after defaults and validation.
type settings[T any] struct {
	name             string
	subject          string
	stream           string
	subjectOf        func(T) string
	encode           func([]byte, T) ([]byte, error)
	msgIDOf          func(T) string
	headersOf        func(T) nats.Header
	maxInFlight      int
	maxInFlightBytes int64
	ackTimeout       time.Duration
	attempts         int
	retryBudget      time.Duration
	retryBackoff     time.Duration
	fastBatches      FastBatches
	onError          func(error) // nil: the default report through logger
	logger           *slog.Logger
	tick             time.Duration // how often the retry goroutine looks at the publishes in flight
}

// settle applies the defaults and validates every field. The returned
// error joins one error per invalid field, each wrapping ErrInvalidConfig
// and naming the field and its value.
func (c Config[T]) settle() (settings[T], error) {
	errs := fielderr.New(ErrInvalidConfig)
	bad := errs.Add
	switch {
	case c.Subject == "" && c.SubjectOf == nil:
		bad("Subject", `""`, "required unless SubjectOf is set")
	case c.Subject != "" && c.SubjectOf != nil:
		bad("Subject", fmt.Sprintf("%q", c.Subject), "set Subject or SubjectOf, not both")
	case c.Subject != "" && !validSubject(c.Subject):
		bad("Subject", fmt.Sprintf("%q", c.Subject), "not a subject to publish to (empty tokens, spaces or wildcards)")
	}
	if c.Stream != "" && !validStreamName(c.Stream) {
		bad("Stream", fmt.Sprintf("%q", c.Stream), "not a stream name (white space, '.', '*', '>', a path separator or a control character)")
	}
	if c.Encode == nil {
		bad("Encode", "nil", "required: it appends a value's payload to a buffer")
	}
	if c.MaxInFlight < 0 || c.MaxInFlight > MaxMaxInFlight {
		bad("MaxInFlight", c.MaxInFlight, fmt.Sprintf("must be in [1, %d], or zero for the default %d", MaxMaxInFlight, DefaultMaxInFlight))
	}
	if c.MaxInFlightBytes < 0 {
		bad("MaxInFlightBytes", c.MaxInFlightBytes, "must be positive, or zero for the default 64 MiB")
	}
	if c.AckTimeout < 0 || c.AckTimeout > MaxDuration {
		bad("AckTimeout", c.AckTimeout, "must be in (0, 24h], or zero for the default 5s")
	}
	if c.Attempts < 0 {
		bad("Attempts", c.Attempts, "must be positive (1: no retries), or zero for no bound but RetryBudget")
	}
	if c.RetryBudget < 0 || c.RetryBudget > MaxDuration {
		bad("RetryBudget", c.RetryBudget, "must be in (0, 24h], or zero for the default 30s")
	}
	if c.RetryBackoff < 0 || c.RetryBackoff > MaxDuration {
		bad("RetryBackoff", c.RetryBackoff, "must be in (0, 24h], or zero for the default 100ms")
	}
	if c.FastBatches != FastBatchesOff && c.FastBatches != FastBatchesAuto {
		bad("FastBatches", c.FastBatches, "must be FastBatchesOff (0) or FastBatchesAuto (1)")
	}
	if c.Sink.Spill.Dir != "" && c.MsgIDOf == nil {
		bad("Sink.Spill.Dir", fmt.Sprintf("%q", c.Sink.Spill.Dir), "needs MsgIDOf: a value read back from disk after a restart is published again, "+
			"and only the caller's id (not the sink's NUID and sequence number, which a new process draws anew) lets the stream store it once")
	}
	if err := errs.Err(); err != nil {
		return settings[T]{}, err
	}
	s := settings[T]{
		name:             cmp.Or(c.Sink.Name, DefaultName),
		subject:          c.Subject,
		stream:           c.Stream,
		subjectOf:        c.SubjectOf,
		encode:           c.Encode,
		msgIDOf:          c.MsgIDOf,
		headersOf:        c.HeadersOf,
		maxInFlight:      cmp.Or(c.MaxInFlight, DefaultMaxInFlight),
		maxInFlightBytes: int64(cmp.Or(c.MaxInFlightBytes, DefaultMaxInFlightBytes)),
		ackTimeout:       cmp.Or(c.AckTimeout, DefaultAckTimeout),
		attempts:         cmp.Or(c.Attempts, math.MaxInt),
		retryBudget:      cmp.Or(c.RetryBudget, DefaultRetryBudget),
		retryBackoff:     cmp.Or(c.RetryBackoff, DefaultRetryBackoff),
		fastBatches:      c.FastBatches,
		onError:          c.OnError,
		logger:           c.Sink.Logger,
	}
	// The retry goroutine's resolution: a quarter of the shortest wait it
	// times, within [1 ms, 50 ms].
	s.tick = min(max(min(s.ackTimeout, s.retryBackoff)/4, time.Millisecond), 50*time.Millisecond)
	return s, nil
}

// sinkConfig is the sink.Config of the Sink's rings and workers.
func (c Config[T]) sinkConfig(name string) sink.Config[T] {
	sc := c.Sink
	sc.Name = cmp.Or(sc.Name, name)
	return sc
}

// validStreamName reports whether s may name a JetStream stream: no white
// space, '.', '*', '>', path separator or control character (the server's
// rule).
func validStreamName(s string) bool {
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune(".*>/\\", r) {
			return false
		}
	}
	return true
}

// captures reports whether a stream whose subjects are filters takes
// subject: a filter token "*" matches one token, a last token ">" one or
// more.
func captures(filters []string, subject string) bool {
	for _, f := range filters {
		if subjectMatches(f, subject) {
			return true
		}
	}
	return false
}

// subjectMatches reports whether the filter f matches subject.
func subjectMatches(f, subject string) bool {
	ft, st := strings.Split(f, "."), strings.Split(subject, ".")
	for i, tok := range ft {
		switch {
		case tok == ">":
			return i == len(ft)-1 && len(st) > i
		case i >= len(st):
			return false
		case tok != "*" && tok != st[i]:
			return false
		}
	}
	return len(ft) == len(st)
}

// validSubject reports whether s is a subject one may publish to: tokens
// separated by dots, none empty, no wildcard and no white space.
func validSubject(s string) bool {
	if s == "" || strings.ContainsAny(s, " \t\r\n") {
		return false
	}
	for tok := range strings.SplitSeq(s, ".") {
		if tok == "" || tok == "*" || tok == ">" {
			return false
		}
	}
	return true
}
