package natssink_test

import (
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/natssink"
	"github.com/shardedsink/shardedsink/sink"
)

// MsgIDOf and HeadersOf reach the stream: each message carries the
// caller's id and headers, the sink's own headers win, and a value pushed
// twice with the same id is stored once.
func TestMsgIDOfAndHeadersOfReachTheStream(t *testing.T) {
	srv := embeddedServer(t)
	st := stream(t, srv.JetStream, "HDR", "hdr.>")
	s, err := natssink.New(srv.JetStream, natssink.Config[event]{
		Subject: "hdr.x", Encode: encodeEvent,
		MsgIDOf: func(e event) string {
			if e.Seq < 0 {
				return ""
			}
			return fmt.Sprintf("event-%d", e.Seq)
		},
		HeadersOf: func(e event) nats.Header {
			return nats.Header{
				"Traceparent": {fmt.Sprintf("00-%032d-%016d-01", e.Seq, e.Seq)},
				"Nats-Msg-Id": {"overridden"},
			}
		},
		Sink: sink.Config[event]{Logger: quiet},
	})
	require.NoError(t, err)
	for _, seq := range []int{1, 2, 1, -1} { // 1 twice; -1 has no id
		require.True(t, s.Push(event{Seq: seq}))
	}
	require.NoError(t, s.Shutdown(t.Context()))
	stats := s.Stats()
	require.Equal(t, uint64(3), stats.Acked)
	require.Equal(t, uint64(1), stats.Duplicates, "the second 1")
	require.Equal(t, uint64(1), stats.Failed, "the empty id")
	require.Contains(t, stats.LastError, "MsgIDOf returned an empty id")

	for i, seq := range []int{1, 2} {
		m, err := st.GetMsg(t.Context(), uint64(i+1))
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("event-%d", seq), m.Header.Get("Nats-Msg-Id"))
		require.Equal(t, fmt.Sprintf("00-%032d-%016d-01", seq, seq), m.Header.Get("Traceparent"))
	}
	info, err := st.Info(t.Context())
	require.NoError(t, err)
	require.Equal(t, uint64(2), info.State.Msgs)
}
