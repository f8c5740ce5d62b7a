package natsmetric

import (
	"errors"

	"go.opentelemetry.io/otel/metric"

	"github.com/shardedsink/shardedsink/internal/statstable"
	"github.com/shardedsink/shardedsink/natssink"
	"github.com/shardedsink/shardedsink/otelmetric"
	"github.com/shardedsink/shardedsink/otelmetric/internal/instruments"
)

// Stats is what [Observe] reads: a *natssink.Sink[T] of any T.
type Stats interface {
	Stats() natssink.Stats
}

// natsRows are the instruments of a natssink sink beyond its rings', from
// the rows of natssink.Stats in internal/statstable (NATS). The package
// doc lists them.
var natsRows = instruments.FromTable[natssink.Stats](statstable.NATS, false)

// Observe creates the natssink sink's instruments and its rings' (see the
// package doc) on mp's meter otelmetric.ScopeName, each observation with
// shardedsink.sink.name = Config.Name, and registers one callback that
// reads s.ReadStats (s.Stats, for a source without it) at each
// collection; with otelmetric.WithPerShard the ring instruments are
// observed per shard. Unregister the returned Registration to stop
// observing.
func Observe(mp metric.MeterProvider, s Stats, opts ...otelmetric.Option) (metric.Registration, error) {
	if mp == nil {
		return nil, errors.New("natsmetric: MeterProvider is nil")
	}
	o := statstable.Apply(opts)
	st := s.Stats()
	m := mp.Meter(otelmetric.ScopeName)
	t, err := instruments.New(m, natsRows, st.Name, 0)
	if err != nil {
		return nil, err
	}
	rings, err := instruments.NewRings(m, st.Name, statstable.Layout{Shards: st.Rings.Shards, PerShard: o.PerShard})
	if err != nil {
		return nil, err
	}
	var snaps statstable.Snapshots[natssink.Stats]
	return instruments.Register(m, func(obs metric.Observer) error {
		st := snaps.Read(s, s.Stats)
		defer snaps.Put(st)
		t.Observe(obs, 0, statstable.At[natssink.Stats]{Stats: st, Shard: -1})
		return rings.Observe(obs, &st.Rings)
	}, t.Instruments(), rings.Instruments())
}
