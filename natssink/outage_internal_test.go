package natssink

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/sink"
)

// While the stream does not answer (every publish refused as temporarily
// unavailable), the sink probes it with one value per retry instead of
// resending its whole window at each backoff step, and holds the values
// pushed meanwhile unpublished; once a probe is acked, every held value is
// published once. A 3 s outage of 200 values costs about one publish per
// value, the probes aside. Without the probe (every due value resent at
// each step) the same outage made 5.8 publishes per value (1,153 for 200).
func TestAnOutageCostsAboutOnePublishPerValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, tr := newFake(t, Config[int]{})
		var down atomic.Bool
		down.Store(true)
		tr.setAnswer(func(published) (string, string, bool) {
			if down.Load() {
				return "", busyAck, true
			}
			return "", okAck, true
		})
		const n = 200
		for i := range n {
			require.True(t, s.Push(i))
			if i%20 == 19 {
				time.Sleep(300 * time.Millisecond) // values arrive through the outage
			}
		}
		synctest.Wait()
		during := len(tr.all())
		down.Store(false)
		time.Sleep(5 * time.Second) // the next probe is acked, and the held values go
		synctest.Wait()
		st := shutdown(t, s, n)
		require.Equal(t, uint64(n), st.Acked, "%+v", st)
		pubs := len(tr.all())
		t.Logf("%d publishes for %d values, %d of them during the outage; Retried %d", pubs, n, during, st.Retried)
		require.LessOrEqual(t, float64(pubs)/n, 1.5, "publishes per value")
		require.Less(t, during, n/2, "during the outage the sink probes; it does not publish every value")
	})
}

// The slots an outage needed are given back once its backlog clears:
// within two shrinkEvery the chunks above what the values in flight use
// are dropped, and a value that needs a dropped chunk again gets it anew.
func TestTheSlotsOfAnOutageAreGivenBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, tr := newFake(t, Config[int]{AckTimeout: time.Hour, Sink: sink.Config[int]{RingCapacity: 8192}})
		const n = 5000 // about five chunks of slots in flight at once
		for i := range n {
			require.True(t, s.Push(i))
		}
		synctest.Wait()
		require.Equal(t, uint64(n), s.Stats().InFlight)
		require.GreaterOrEqual(t, s.slots.chunksInUse(), 5)
		// The stream answers again: every value is acked.
		tr.setAnswer(ackAll)
		for _, p := range tr.all() {
			s.onAck(p.reply, "", []byte(okAck))
		}
		synctest.Wait()
		require.Zero(t, s.Stats().InFlight)
		// Steady traffic: a value now and then.
		for i := range 30 {
			require.True(t, s.Push(n+i))
			time.Sleep(time.Second)
		}
		synctest.Wait()
		require.Equal(t, 1, s.slots.chunksInUse(), "chunks after 30 s of steady traffic")
		require.LessOrEqual(t, s.pool.highWater.Load(), int32(chunkLen))
		// A burst needs the dropped chunks again.
		tr.setAnswer(nil)
		for i := range 3000 {
			require.True(t, s.Push(n+30+i))
		}
		synctest.Wait()
		require.GreaterOrEqual(t, s.slots.chunksInUse(), 3)
		tr.setAnswer(ackAll)
		for _, p := range tr.all() {
			s.onAck(p.reply, "", []byte(okAck))
		}
		st := shutdown(t, s, n+30+3000)
		require.Equal(t, uint64(n+30+3000), st.Acked)
	})
}
