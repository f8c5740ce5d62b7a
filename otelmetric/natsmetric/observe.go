package natsmetric

import (
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/shardedsink/shardedsink/natssink"
	"github.com/shardedsink/shardedsink/otelmetric"
	"github.com/shardedsink/shardedsink/otelmetric/internal/instruments"
)

// Stats is what [Observe] reads: a *natssink.Sink[T] of any T.
type Stats interface {
	Stats() natssink.Stats
}

const exportedDesc = "Values the stream acknowledged (no error.type) or given up: error.type=failed (out of attempts or budget, a permanent or an Encode error, or given up by Shutdown)."

// natsRows are the instruments of a natssink sink beyond its rings', from
// natssink.Stats, in the shape of the SDK's exporter self-metrics
// (otel.sdk.exporter.span.exported with error.type, .inflight). The
// package doc lists them; a new Stats field is one more row here.
var natsRows = []instruments.Row[natssink.Stats]{
	{Name: "shardedsink.nats.pushed", Unit: "{value}", Kind: instruments.Counter,
		Desc: "Calls of Push: dropped, queued, in flight, acked or failed.",
		Read: func(s natssink.Stats) int64 { return int64(s.Pushed) }},
	{Name: "shardedsink.nats.queued", Unit: "{value}", Kind: instruments.UpDownCounter,
		Desc: "Values accepted and not yet published: in the rings or with a worker waiting for room (MaxInFlight).",
		Read: func(s natssink.Stats) int64 { return int64(s.Queued) }},
	{Name: "shardedsink.nats.inflight", Unit: "{value}", Kind: instruments.UpDownCounter,
		Desc: "Values published and awaiting their ack or a retry; at most MaxInFlight.",
		Read: func(s natssink.Stats) int64 { return int64(s.InFlight) }},
	{Name: "shardedsink.nats.exported", Unit: "{value}", Kind: instruments.Counter, Desc: exportedDesc,
		Read: func(s natssink.Stats) int64 { return int64(s.Acked) }},
	{Name: "shardedsink.nats.exported", Unit: "{value}", Kind: instruments.Counter, Desc: exportedDesc,
		Attrs: []attribute.KeyValue{instruments.ErrorType.String("failed")},
		Read:  func(s natssink.Stats) int64 { return int64(s.Failed) }},
	{Name: "shardedsink.nats.duplicates", Unit: "{ack}", Kind: instruments.Counter,
		Desc: "Acks saying the stream already held the value (a retry after a lost ack); each value is exported once.",
		Read: func(s natssink.Stats) int64 { return int64(s.Duplicates) }},
	{Name: "shardedsink.nats.retries", Unit: "{publish}", Kind: instruments.Counter,
		Desc: "Publishes after a value's first.",
		Read: func(s natssink.Stats) int64 { return int64(s.Retried) }},
}

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
	o := instruments.Apply(opts)
	st := s.Stats()
	m := mp.Meter(otelmetric.ScopeName)
	t, err := instruments.New(m, natsRows, st.Name, 0)
	if err != nil {
		return nil, err
	}
	rings, err := instruments.NewRings(m, st.Name, st.Rings.Shards, o.PerShard)
	if err != nil {
		return nil, err
	}
	var snaps instruments.Snapshots[natssink.Stats]
	return instruments.Register(m, func(obs metric.Observer) error {
		st := snaps.Read(s, s.Stats)
		defer snaps.Put(st)
		t.Observe(obs, 0, *st)
		return rings.Observe(obs, &st.Rings)
	}, t.Instruments(), rings.Instruments())
}
