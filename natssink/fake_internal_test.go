package natssink

import (
	"bytes"
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
)

// published is one publish the fake transport saw.
type published struct {
	at      time.Time // the bubble's clock
	subject string
	reply   string
	id      string
	payload string
}

// fakeTransport records the publishes. answer, when set, decides the
// stream's answer to each: it returns the status and body of the ack and
// whether to send it; the ack goes to onAck from a goroutine of its own,
// as the client's subscription would deliver it. fail, when set, returns
// the error of the publish itself.
type fakeTransport struct {
	s      *Sink[int]
	mu     sync.Mutex
	pubs   []published
	answer func(p published) (status string, body string, send bool)
	fail   func(p published) error
}

func (f *fakeTransport) publish(subject, reply string, hdr nats.Header, payload []byte) error {
	// Copies: the sink's reply and id strings are views of a slot's buffer,
	// valid for the call only.
	p := published{at: time.Now(), subject: subject, reply: strings.Clone(reply), id: strings.Clone(hdr.Get(msgIDHeader)), payload: string(payload)}
	f.mu.Lock()
	f.pubs = append(f.pubs, p)
	answer, fail := f.answer, f.fail
	f.mu.Unlock()
	if fail != nil {
		if err := fail(p); err != nil {
			return err
		}
	}
	if answer != nil {
		if status, body, send := answer(p); send {
			go f.s.onAck(p.reply, status, []byte(body))
		}
	}
	return nil
}

// all returns the publishes so far.
func (f *fakeTransport) all() []published {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]published(nil), f.pubs...)
}

func (f *fakeTransport) setAnswer(a func(p published) (string, string, bool)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answer = a
}

// The answers of a stream.
const (
	okAck        = `{"stream":"S","seq":1}`
	dupAck       = `{"stream":"S","seq":1,"duplicate": true}`
	busyAck      = `{"error":{"code":503,"err_code":10008,"description":"JetStream system temporarily unavailable"},"stream":"S","seq":0}`
	inProcessAck = `{"error":{"code":409,"err_code":10158,"description":"duplicate message id is in process"},"stream":"S","seq":0}`
	refusedAck   = `{"error":{"code":400,"err_code":10054,"description":"message size exceeds maximum allowed"},"stream":"S","seq":0}`
)

func ackAll(published) (string, string, bool) { return "", okAck, true }

// attemptOf returns the attempt number at the end of an ack subject.
func attemptOf(t *testing.T, reply string) int {
	t.Helper()
	i := bytes.LastIndexByte([]byte(reply), '.')
	n, err := strconv.Atoi(reply[i+1:])
	require.NoError(t, err, reply)
	return n
}

func encodeInt(dst []byte, v int) ([]byte, error) { return strconv.AppendInt(dst, int64(v), 10), nil }

// newFake builds a sink of ints on a fake transport, with one shard unless
// cfg says otherwise. Call it inside a synctest bubble, and shut the sink
// down before the bubble ends.
func newFake(t *testing.T, cfg Config[int]) (*Sink[int], *fakeTransport) {
	t.Helper()
	if cfg.Subject == "" && cfg.SubjectOf == nil {
		cfg.Subject = "test.values"
	}
	if cfg.Encode == nil {
		cfg.Encode = encodeInt
	}
	if cfg.Sink.Shards == 0 {
		cfg.Sink.Shards = 1
	}
	if cfg.Sink.Logger == nil {
		cfg.Sink.Logger = slog.New(slog.DiscardHandler) // the tests look at Stats and OnError
	}
	st, err := cfg.settle()
	require.NoError(t, err)
	tr := &fakeTransport{}
	s := newSink(st, tr, "_INBOX.test")
	tr.s = s
	require.NoError(t, s.start(cfg))
	// A test that fails before its own Shutdown still stops the sink's
	// goroutines, inside the bubble (where synctest.Test runs cleanups),
	// so that the failure is reported and not a deadlock of the bubble.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	return s, tr
}

// shutdown shuts s down with a minute to spare and checks the identity.
func shutdown(t *testing.T, s *Sink[int], pushed int) Stats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, s.Shutdown(ctx))
	st := s.Stats()
	require.Equal(t, uint64(pushed), st.Pushed, "%+v", st)
	require.Equal(t, st.Pushed, st.Acked+st.Failed+st.Dropped, "%+v", st)
	require.Zero(t, st.InFlight)
	require.Zero(t, st.Queued)
	return st
}

// reports collects what OnError receives.
type reports struct {
	mu  sync.Mutex
	got []*FailureReport
	at  []time.Time
}

func (r *reports) onError(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fr, _ := err.(*FailureReport)
	r.got = append(r.got, fr)
	r.at = append(r.at, time.Now())
}

func (r *reports) all() ([]*FailureReport, []time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*FailureReport(nil), r.got...), append([]time.Time(nil), r.at...)
}

// lastError returns the reason of the latest failure, or nil: the error
// itself, for the tests that match it with errors.Is and errors.As (Stats
// carries only its text).
func (r *reporter) lastError() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}
