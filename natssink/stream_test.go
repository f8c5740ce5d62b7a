package natssink_test

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/natssink"
	"github.com/shardedsink/shardedsink/sink"
)

// New checks the stream the values go to and says what is wrong with it.
func TestNewChecksTheStream(t *testing.T) {
	srv := embeddedServer(t)
	js := srv.JetStream
	for _, sc := range []jetstream.StreamConfig{
		{Name: "NOACK", Subjects: []string{"noack.>"}, NoAck: true},
		{Name: "SHORT", Subjects: []string{"short.>"}, Duplicates: 10 * time.Second},
		{Name: "YOUNG", Subjects: []string{"young.>"}, MaxAge: 20 * time.Second}, // the server caps the window at MaxAge
		{Name: "GOOD", Subjects: []string{"good.>"}},
	} {
		sc.Storage = jetstream.MemoryStorage
		_, err := js.CreateStream(t.Context(), sc)
		require.NoError(t, err)
	}
	for _, tc := range []struct {
		subject, stream string
		want            string
	}{
		{subject: "nobody.here", want: `no stream captures the Subject "nobody.here"`},
		{subject: "noack.x", want: `the stream "NOACK" does not ack (NoAck)`},
		{subject: "short.x", want: `the stream "SHORT" recognises a duplicate within 10s`},
		{subject: "young.x", want: `the stream "YOUNG" recognises a duplicate within 20s (Duplicates, capped by the server at MaxAge 20s)`},
		{subject: "good.x", stream: "MISSING", want: `Stream = "MISSING": no such stream`},
		// Item 10 of issue 44: accepted before, and every value then
		// failed with "expected stream does not match".
		{subject: "short.x", stream: "GOOD", want: `Stream = "GOOD" does not capture the Subject "short.x" (its subjects: ["good.>"])`},
	} {
		s, err := natssink.New(js, natssink.Config[event]{Subject: tc.subject, Stream: tc.stream, Encode: encodeEvent, Sink: sink.Config[event]{Logger: quiet}})
		require.Nil(t, s, tc.subject)
		require.ErrorIs(t, err, natssink.ErrStreamUnsuitable, tc.subject)
		require.Contains(t, err.Error(), tc.want)
	}

	// A window as long as the retries last is enough; SkipStreamCheck
	// skips the check.
	s, err := natssink.New(js, natssink.Config[event]{Subject: "short.x", Encode: encodeEvent, RetryBudget: 5 * time.Second, Sink: sink.Config[event]{Logger: quiet}})
	require.NoError(t, err)
	require.NoError(t, s.Shutdown(t.Context()))
	s, err = natssink.New(js, natssink.Config[event]{Subject: "noack.x", Encode: encodeEvent, SkipStreamCheck: true, Sink: sink.Config[event]{Logger: quiet}})
	require.NoError(t, err)
	require.NoError(t, s.Shutdown(t.Context()))
}

// With Stream set, each publish carries it as Nats-Expected-Stream: a
// value whose subject another stream captures is refused and fails.
func TestAnExpectedStreamRefusesAnotherStream(t *testing.T) {
	srv := embeddedServer(t)
	stream(t, srv.JetStream, "MINE", "mine.>")
	other := stream(t, srv.JetStream, "OTHER", "other.>")
	s, err := natssink.New(srv.JetStream, natssink.Config[event]{
		Stream: "MINE", Encode: encodeEvent,
		SubjectOf: func(e event) string {
			if e.Seq == 1 {
				return "other.x"
			}
			return "mine.x"
		},
		Sink: sink.Config[event]{Logger: quiet},
	})
	require.NoError(t, err)
	for i := range 3 {
		require.True(t, s.Push(event{Seq: i}))
	}
	require.NoError(t, s.Shutdown(t.Context()))
	st := s.Stats()
	require.Equal(t, uint64(2), st.Acked)
	require.Equal(t, uint64(1), st.Failed)
	require.Contains(t, st.LastError, "expected stream does not match")
	info, err := other.Info(t.Context())
	require.NoError(t, err)
	require.Zero(t, info.State.Msgs)
}
