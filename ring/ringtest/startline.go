package ringtest

import (
	"runtime"
	"sync/atomic"
)

// startLine starts a group of goroutines together, so that their first
// operations on the ring overlap as much as the processors allow. A
// goroutine started with go, or woken by a closed channel, runs microseconds
// after the others: long enough for a short phase to run alone.
type startLine struct {
	n     int32
	ready atomic.Int32
	gone  atomic.Bool
}

func newStartLine(n int) *startLine { return &startLine{n: int32(n)} }

// wait checks in and returns when every goroutine has. The last to check in
// fires the start; the others busy-wait for it, yielding now and then so
// that all of them can check in even when there are more goroutines than
// processors.
func (s *startLine) wait() {
	if s.ready.Add(1) == s.n {
		s.gone.Store(true)
		return
	}
	for i := 1; !s.gone.Load(); i++ {
		if i%4096 == 0 {
			runtime.Gosched()
		}
	}
}
