package otelmetric

import (
	"errors"

	"go.opentelemetry.io/otel/metric"

	"github.com/shardedsink/shardedsink/internal/statstable"
	"github.com/shardedsink/shardedsink/otelmetric/internal/instruments"
	"github.com/shardedsink/shardedsink/sink"
)

// SinkStats is what [ObserveSink] reads: a *sink.Sink[T] of any T.
type SinkStats interface {
	Stats() sink.Stats
}

// errNilProvider is returned for a nil MeterProvider.
var errNilProvider = errors.New("otelmetric: MeterProvider is nil")

// ObserveSink creates the sink's instruments (see the package doc) on
// mp's meter [ScopeName], each observation with shardedsink.sink.name =
// Config.Name (s.Stats is called once here for the name and the shard
// count), and registers one callback that reads s.Stats at each
// collection and observes them all: the sink's push path is untouched.
// Unregister the returned Registration to stop observing; until then the
// MeterProvider holds s.
func ObserveSink(mp metric.MeterProvider, s SinkStats, opts ...Option) (metric.Registration, error) {
	if mp == nil {
		return nil, errNilProvider
	}
	o := statstable.Apply(opts)
	st := s.Stats()
	m := mp.Meter(ScopeName)
	rings, err := instruments.NewRings(m, st.Name, statstable.Layout{Shards: st.Shards, PerShard: o.PerShard})
	if err != nil {
		return nil, err
	}
	var snaps statstable.Snapshots[sink.Stats]
	return instruments.Register(m, func(obs metric.Observer) error {
		st := snaps.Read(s, s.Stats)
		defer snaps.Put(st)
		return rings.Observe(obs, st)
	}, rings.Instruments())
}
