package sink_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/sink"
)

// idLog records value ids from many goroutines: the ones a test's
// producers had accepted, or the ones its Drain saw.
type idLog struct {
	mu  sync.Mutex
	ids []int
	set map[int]bool
}

func (l *idLog) add(ids ...int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.set == nil {
		l.set = map[int]bool{}
	}
	l.ids = append(l.ids, ids...)
	for _, id := range ids {
		l.set[id] = true
	}
}

func (l *idLog) snapshot() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.ids)
}

func (l *idLog) has(id int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.set[id]
}

// Drain records the ids of a batch, so that an idLog is the sink's Action.
func (l *idLog) Drain(_ context.Context, batch []ev) {
	ids := make([]int, len(batch))
	for i, v := range batch {
		ids[i] = v.id
	}
	l.add(ids...)
}

// flushWhileProducing calls Flush over and over until producing is closed,
// and fails unless each Flush returns within 10 s with every value that was
// accepted before it already drained. It fails, too, if the producers
// finished before the first Flush began: then no Flush ran under live
// producers. (A machine may well finish them before the first Flush
// returns; that Flush still ran under them.)
func flushWhileProducing(t *testing.T, s *sink.Sink[ev], accepted, drained *idLog, producing <-chan struct{}) {
	t.Helper()
	select {
	case <-producing:
		t.Fatal("the producers finished before the first Flush began")
	default:
	}
	for flushes := 0; ; flushes++ {
		before := accepted.snapshot()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := s.Flush(ctx)
		cancel()
		require.NoError(t, err, "Flush %d did not return within 10 s", flushes)
		for _, id := range before {
			if !drained.has(id) {
				t.Fatalf("value %d was accepted before Flush %d and not drained when it returned", id, flushes)
			}
		}
		select {
		case <-producing:
			return
		default:
		}
	}
}
