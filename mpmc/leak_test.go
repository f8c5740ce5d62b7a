package mpmc_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/mpmc"
)

// With MPMCDEBUG=leaks, an end that the garbage collector frees without a
// Release is reported, and a released one is not.
func TestAnEndFreedWithoutReleaseIsReported(t *testing.T) {
	reports := make(chan string, 8)
	restore := mpmc.SetLeakCheck(true, func(end string) { reports <- end })
	func() {
		s, r := mpmc.Bounded[int](1)
		s.Clone().Release() // released: not reported
		forgotten := r.Clone()
		_ = forgotten.Len() // used, never released
		s.Release()
		r.Release()
	}()
	// Cleanups run on a runtime goroutine after a collection: collect
	// until the report comes, a bounded number of times.
	var got []string
	for i := 0; i < 200 && len(got) == 0; i++ {
		runtime.GC()
		select {
		case end := <-reports:
			got = append(got, end)
		default:
			runtime.Gosched()
		}
	}
	// A few more rounds, for a wrong report of a released end to show.
	for range 20 {
		runtime.GC()
		runtime.Gosched()
	}
	restore()
	close(reports)
	for end := range reports {
		got = append(got, end)
	}
	require.Equal(t, []string{"Receiver"}, got)
}

// Off (the default), no cleanup is registered at all.
func TestLeakReportsAreOffByDefault(t *testing.T) {
	reports := make(chan string, 8)
	restore := mpmc.SetLeakCheck(false, func(end string) { reports <- end })
	func() {
		_, r := mpmc.Unbounded[int]()
		_ = r.Clone()
	}()
	for range 20 {
		runtime.GC()
		runtime.Gosched()
	}
	restore()
	require.Empty(t, reports)
}
