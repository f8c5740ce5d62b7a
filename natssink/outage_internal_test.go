package natssink

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
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
