package instruments

import (
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/shardedsink/shardedsink/internal/statstable"
	"github.com/shardedsink/shardedsink/sink"
)

// ErrorType is the semantic conventions' error.type attribute, which the
// SDK's self-metrics put on the items they did not process.
const ErrorType = attribute.Key("error.type")

// At is where an instrument of a sink is read: its Stats, and a shard or
// -1 for the sink as a whole.
type At = statstable.At[sink.Stats]

// FromTable returns the instrument rows of rows (of statstable), named by
// their OTel, read from the Stats type S; perShard as statstable.Compile
// has it. A Nanoseconds row is observed in whole microseconds ("us").
func FromTable[S any](rows []statstable.Row, perShard bool) []Row[statstable.At[S]] {
	return statstable.Render(rows, perShard, func(r statstable.Row, f *statstable.Figure[S]) Row[statstable.At[S]] {
		row := Row[statstable.At[S]]{Name: r.OTel.Metric, Unit: r.Unit, Desc: statstable.HelpOf(r, r.OTel),
			Kind: UpDownCounter, Read: f.Read}
		if r.Kind == statstable.Counter {
			row.Kind = Counter
		}
		if r.Unit == statstable.Nanoseconds {
			row.Unit = "us"
			row.Read = func(a statstable.At[S]) int64 { return f.Read(a) / 1e3 }
		}
		if r.OTel.Label != "" {
			row.Attrs = []attribute.KeyValue{attribute.String(r.OTel.Label, r.OTel.Value)}
		}
		if r.OTel.By != "" {
			row.Attrs = append(row.Attrs, attribute.String(r.OTel.By, r.OTel.ByValue))
		}
		return row
	})
}

// RingRows are the instruments of a sink's rings (statstable.Rings), per
// shard or in total, and SinkRows those of the sink as a whole
// (statstable.Sink). The package doc lists them.
var (
	RingRows = FromTable[sink.Stats](statstable.Rings, true)
	SinkRows = FromTable[sink.Stats](statstable.Sink, false)
)

// Rings is the ring and sink instruments of one sink, and how a
// collection reads them.
type Rings struct {
	whole, shards *Table[At]
	layout        statstable.Layout
}

// NewRings creates on m the ring and sink instruments of the sink named
// name, read as l says.
func NewRings(m metric.Meter, name string, l statstable.Layout) (*Rings, error) {
	whole, err := New(m, SinkRows, name, 0)
	if err != nil {
		return nil, err
	}
	shards, err := New(m, RingRows, name, l.Labels())
	if err != nil {
		return nil, err
	}
	return &Rings{whole: whole, shards: shards, layout: l}, nil
}

// Instruments returns the instruments, for RegisterCallback.
func (r *Rings) Instruments() []metric.Observable {
	return append(r.whole.Instruments()[:len(r.whole.Instruments()):len(r.whole.Instruments())], r.shards.Instruments()...)
}

// Observe observes st, or returns an error when st does not have the
// shard count the instruments were made for.
func (r *Rings) Observe(o metric.Observer, st *sink.Stats) error {
	if n := len(st.PerShard); n != r.layout.Shards {
		return fmt.Errorf("otelmetric: sink %q reports %d shards, the instruments were made for %d", st.Name, n, r.layout.Shards)
	}
	r.whole.Observe(o, 0, statstable.Whole(st))
	for in := range r.layout.Instances() {
		r.shards.Observe(o, in, statstable.Ring(r.layout, st, in))
	}
	return nil
}
