package spill

import (
	"io"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAReaderFollowingAnAppenderLosesNothing runs what the Log's doc
// allows: one goroutine appends, and syncs now and then, while another
// reads and marks done, across many segments of the smallest size. Every
// record must come back, once, in order, and none be counted corrupt:
// nothing on disk is. (Before the reader judged its segment's tail
// against a length it had loaded before the appender wrote and sealed it,
// and skipped the rest of a good segment as torn.)
func TestAReaderFollowingAnAppenderLosesNothing(t *testing.T) {
	const n = 20000 // some 50 segments of MinSegmentBytes
	for round := range 3 {
		l := open(t, t.TempDir(), Options{MaxBytes: 64 << 20, SegmentBytes: MinSegmentBytes})
		var finished atomic.Bool
		appendErr := make(chan error, 1)
		go func() {
			defer finished.Store(true)
			for i := range n {
				if err := l.Append(record(i)); err != nil {
					appendErr <- err
					return
				}
				if i%997 == 0 {
					if err := l.Sync(); err != nil {
						appendErr <- err
						return
					}
				}
				if i%64 == 0 {
					runtime.Gosched() // let the reader catch up mid-segment
				}
			}
			appendErr <- nil
		}()
		next := 0
		for {
			// Loaded before Next: once the appender is over, an io.EOF
			// means the reader has all.
			over := finished.Load()
			rec, err := l.Next()
			if err == io.EOF {
				require.NoError(t, l.Done())
				if over {
					break
				}
				runtime.Gosched()
				continue
			}
			require.NoError(t, err)
			i := index(t, rec)
			if i != next {
				st := l.Stats()
				require.Failf(t, "a record out of place",
					"round %d: read record %d after %d: records %d-%d lost (Appended %d, Read %d, Corrupt %d)",
					round, i, next-1, next, i-1, st.Appended, st.Read, st.Corrupt)
			}
			next++
			if next%100 == 0 {
				require.NoError(t, l.Done())
			}
		}
		require.NoError(t, <-appendErr)
		st := l.Stats()
		require.Equal(t, n, next, "round %d: records read", round)
		require.EqualValues(t, n, st.Appended, "round %d", round)
		require.EqualValues(t, n, st.Read, "round %d", round)
		require.Zero(t, st.Corrupt, "round %d: segments counted corrupt", round)
		l.mu.Lock()
		last := l.segs[len(l.segs)-1].id
		l.mu.Unlock()
		require.Greater(t, last, uint64(30), "round %d: segments crossed", round)
		require.NoError(t, l.Close())
	}
}

// TestNextAfterCloseReturnsErrClosed: ErrClosed is returned by every call
// after Close, Next's included, whether the reader had begun or not.
func TestNextAfterCloseReturnsErrClosed(t *testing.T) {
	t.Run("before any read", func(t *testing.T) {
		l := open(t, t.TempDir(), Options{MaxBytes: 1 << 20})
		appendN(t, l, 0, 10)
		require.NoError(t, l.Close())
		rec, err := l.Next()
		require.ErrorIs(t, err, ErrClosed)
		require.Nil(t, rec)
	})
	t.Run("mid-segment", func(t *testing.T) {
		l := open(t, t.TempDir(), Options{MaxBytes: 1 << 20})
		appendN(t, l, 0, 10)
		rec, err := l.Next()
		require.NoError(t, err)
		require.Equal(t, 0, index(t, rec))
		require.NoError(t, l.Close())
		_, err = l.Next()
		require.ErrorIs(t, err, ErrClosed)
	})
}
