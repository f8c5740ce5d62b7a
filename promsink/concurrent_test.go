package promsink_test

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/promsink"
	"github.com/shardedsink/shardedsink/sink"
)

// TestScrapesAtOnceShareNothing gathers one registry from several
// goroutines at once while producers push: under -race, any state that
// scrapes share (the label pairs, the metric slice) shows. Each scrape
// sees a consistent family set.
func TestScrapesAtOnceShareNothing(t *testing.T) {
	s := sink.MustNew(sink.Config[int]{Name: "events", Shards: 4, RingCapacity: 32, Logger: slog.New(slog.DiscardHandler)},
		sink.ActionFunc[int](func(context.Context, []int) {}))
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(promsink.NewSinkCollector(s, promsink.WithPerShard()))
	var done atomic.Bool
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for i := 0; !done.Load(); i++ {
				s.Push(i)
			}
		})
	}
	var scrapers sync.WaitGroup
	for range 4 {
		scrapers.Go(func() {
			for range 30 {
				mfs, err := reg.Gather()
				if !assert.NoError(t, err) {
					return
				}
				assert.Equal(t, 20, len(mfs), "families")
			}
		})
	}
	scrapers.Wait()
	done.Store(true)
	wg.Wait()
	require.NoError(t, s.Shutdown(context.Background()))
}
