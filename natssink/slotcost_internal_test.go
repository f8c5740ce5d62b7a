package natssink

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/sink"
)

// A value in flight costs about 1 KiB of heap (under 1,200 bytes) with a
// 195-byte payload (the slot, its chunk's arrays, nats.go's header map, the reply
// subject's buffer and the payload's): what the docs of MaxInFlight and
// of the outages quote.
func TestASlotInFlightCostsAbout1KiB(t *testing.T) {
	payload := strings.Repeat("x", 195)
	cfg := Config[int]{
		Subject: "x", AckTimeout: time.Hour,
		Encode: func(dst []byte, _ int) ([]byte, error) { return append(dst, payload...), nil },
		Sink:   sink.Config[int]{Shards: 1},
	}
	st, err := cfg.settle()
	require.NoError(t, err)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := newSink(st, nopTransport{}, "_INBOX.NUIDNUIDNUIDNUIDNUID00")
	const n = 64 * chunkLen
	for i := range n {
		idx, ok := s.pool.take()
		require.True(t, ok)
		s.inflight.Add(1)
		s.publishFirst(idx, &i, 0)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perSlot := float64(after.HeapAlloc-before.HeapAlloc) / n
	t.Logf("%.0f bytes of heap per value in flight", perSlot)
	require.Less(t, perSlot, 1200.0)
	runtime.KeepAlive(s)
}

// nopTransport takes every publish and answers none.
type nopTransport struct{}

func (nopTransport) publish(string, string, nats.Header, []byte) error { return nil }
