package otelsink_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/shardedsink/shardedsink/internal/machine"
	"github.com/shardedsink/shardedsink/otelsink"
)

// WithMaxQueueSize sets the total the processor buffers, as the SDK's
// does: a burst of 7/8 of it from 64 goroutines at once, with the exporter
// stalled, is held with no drop. With the default shard count (4 x
// GOMAXPROCS, more shards than CPUs) and a ring per CPU as the home of
// Sink.Push, OnEnd used to shed such a burst at about 3/8 of the queue on
// 2 cores (issue 36); each CPU now owns a group of shards, and a push
// whose home is full tries the others.
func TestABurstOfSevenEighthsOfTheQueueIsHeld(t *testing.T) {
	if !machine.CPUReadable() {
		// With homes from the stack (no cheap CPU number) the home is
		// random per goroutine and the one retry can still shed a burst.
		t.Skip("CPU numbers are not readable here: the sink takes its homes from the stack")
	}
	const queue, producers = 2048, 64
	exp := newTestExporter()
	release := make(chan struct{})
	exp.hook = func(ctx context.Context, _ []sdktrace.ReadOnlySpan) error {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}
	p, err := otelsink.New(exp, otelsink.WithMaxQueueSize(queue))
	require.NoError(t, err)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, p.Shutdown(ctx))
	}()
	require.Equal(t, queue, p.QueueCapacity())
	if shards, cpus := p.Stats().Sink.Shards, len(machine.CPUs()); shards <= cpus {
		// A ring per CPU at most (more than 32 CPUs: the default shard
		// count is capped at 32): no CPU owns a group, and the homes of
		// 64 goroutines on many CPUs need not spread evenly.
		t.Skipf("%d shards on %d CPUs: no groups of shards", shards, cpus)
	}
	total := 7 * queue / 8
	var start, wg sync.WaitGroup
	start.Add(1)
	for g := range producers {
		n := total / producers
		wg.Go(func() {
			start.Wait()
			for i := range n {
				p.OnEnd(stub(g*n+i, true))
			}
		})
	}
	start.Done()
	wg.Wait()
	st := p.Stats()
	require.Zero(t, st.Dropped, "GOMAXPROCS %d, %d CPUs: %+v", runtime.GOMAXPROCS(0), len(machine.CPUs()), st)
	close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, p.ForceFlush(ctx))
	require.Len(t, exp.GetSpans(), total)
}
