package logsink

import (
	"bytes"
	"context"
	"log/slog"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/shardedsink/shardedsink/internal/machine"
)

// Where the CPU is cheap to read, the count has a stripe per CPU, so that
// calls on different cores write different lines; elsewhere it is one.
func TestTheCallCountHasAStripePerCPU(t *testing.T) {
	c := newCallCount()
	if !machine.CPUReadable() {
		if len(c.stripes) != 1 {
			t.Fatalf("%d stripes without a readable CPU, want 1", len(c.stripes))
		}
		return
	}
	cpus := len(machine.CPUs())
	if n := len(c.stripes); n < min(cpus, maxCallStripes) || n&(n-1) != 0 || int(c.mask) != n-1 {
		t.Fatalf("%d stripes (mask %#x) for %d CPUs, want a power of two of at least %d", n, c.mask, cpus, min(cpus, maxCallStripes))
	}
}

// A call that ends on another stripe than it began on leaves the sum, not
// the stripes, at zero; a call still in flight keeps it above zero.
func TestTheCallCountSumsItsStripes(t *testing.T) {
	c := callCount{stripes: make([]paddedCount, 2), mask: 1, byCPU: true}
	c.stripes[0].n.Add(1) // began on stripe 0
	if c.quiet() {
		t.Fatal("quiet with a call in flight")
	}
	c.stripes[1].n.Add(-1) // ended on stripe 1
	if !c.quiet() {
		t.Fatalf("not quiet once the call ended on another stripe (%d, %d)", c.stripes[0].n.Load(), c.stripes[1].n.Load())
	}
	in := c.begin()
	c.undo(in)
	if !c.quiet() {
		t.Fatal("not quiet after a begin and its undo")
	}
}

// Close waits for a record that Begin started, on whichever CPU it ends,
// and writes it; a record begun after Close is refused and counted.
func TestCloseWaitsForARecordBegunBeforeIt(t *testing.T) {
	var mu sync.Mutex
	var out bytes.Buffer
	w, err := New(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return out.Write(p)
	}), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := w.Stream()
	if !s.Begin(slog.LevelInfo) {
		t.Fatal("Begin refused a record into an empty Writer")
	}
	closed := make(chan error, 1)
	go func() { closed <- w.Close(context.Background()) }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a record begun before it was in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	// The formatting goes on, perhaps on another CPU.
	runtime.Gosched()
	r := GetRecord()
	r.e.append([]byte("{\"msg\":\"begun before Close\"}\n"))
	s.Push(slog.LevelInfo, r)
	s.End()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if s.Begin(slog.LevelInfo) {
		t.Fatal("Begin took a record after Close")
	}
	mu.Lock()
	defer mu.Unlock()
	if !bytes.Contains(out.Bytes(), []byte("begun before Close")) {
		t.Fatalf("the record begun before Close is not in the output %q", out.String())
	}
	if st := w.Stats(); st.Written != 1 || st.Dropped != 1 {
		t.Fatalf("Stats = %+v, want 1 written and 1 dropped after Close", st)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// BenchmarkCallCount measures a call's begin and end from every P at
// once: one counter, which every core writes, against the count striped
// by CPU. core-rt-ns is the cores' round trip just before (the VM's two
// cores near or far apart).
//
//	go test -run '^$' -bench CallCount -count 10 ./logsink/
func BenchmarkCallCount(b *testing.B) {
	for _, tc := range []struct {
		name string
		c    callCount
	}{
		{"one-counter", callCount{stripes: make([]paddedCount, 1)}},
		{"by-cpu", newCallCount()},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c := tc.c
			b.ReportMetric(float64(machine.CoreRoundTrip(100000).Nanoseconds()), "core-rt-ns")
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					c.begin()
					c.end()
				}
			})
		})
	}
}
