package series

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shardedsink/shardedsink/internal/statstable"
	"github.com/shardedsink/shardedsink/sink"
)

// At is where a series of a sink is read: its Stats, and a shard or -1
// for the sink as a whole.
type At = statstable.At[sink.Stats]

// FromTable returns the series of rows (of statstable), named by their
// Prom, read from the Stats type S; perShard as statstable.Compile has it.
// A Nanoseconds row is exported in seconds.
func FromTable[S any](rows []statstable.Row, perShard bool) []Series[statstable.At[S]] {
	return statstable.Render(rows, perShard, func(r statstable.Row, f *statstable.Figure[S]) Series[statstable.At[S]] {
		s := Series[statstable.At[S]]{Name: r.Prom.Metric, Help: statstable.HelpOf(r, r.Prom), Type: prometheus.GaugeValue,
			Label: r.Prom.Label, Value: r.Prom.Value, Read: func(a statstable.At[S]) float64 { return float64(f.Read(a)) }}
		if r.Kind == statstable.Counter {
			s.Type = prometheus.CounterValue
		}
		if r.Unit == statstable.Nanoseconds {
			s.Read = func(a statstable.At[S]) float64 { return time.Duration(f.Read(a)).Seconds() }
		}
		return s
	})
}

// RingSeries are the series of a sink's rings (statstable.Rings), per
// shard or in total. The package doc lists them, and SinkSeries'.
var RingSeries = FromTable[sink.Stats](statstable.Rings, true)

// SinkSeries are the series of a sink as a whole (statstable.Sink).
var SinkSeries = FromTable[sink.Stats](statstable.Sink, false)

// Rings is the compiled ring and sink series of one sink.
type Rings struct {
	Whole, shards *Table[At]
	layout        statstable.Layout
}

// NewRings compiles the ring and sink series of the sink named name, read
// as l says.
func NewRings(name string, l statstable.Layout) *Rings {
	return &Rings{Whole: Compile(SinkSeries, name, 0), shards: Compile(RingSeries, name, l.Labels()), layout: l}
}

// Describe sends the descriptors of the ring and sink series.
func (r *Rings) Describe(ch chan<- *prometheus.Desc) {
	r.Whole.Describe(ch)
	r.shards.Describe(ch)
}

// Size is the number of metrics emit appends.
func (r *Rings) Size() int { return r.Whole.Size() + r.shards.Size() }

// Emit appends the metrics of st, or returns an error when st does not
// have the shard count the collector was made for.
func (r *Rings) Emit(dst []Metric, st *sink.Stats) ([]Metric, error) {
	if len(st.PerShard) != r.layout.Shards {
		return dst, fmt.Errorf("promsink: sink %q reports %d shards, the collector was made for %d", st.Name, len(st.PerShard), r.layout.Shards)
	}
	dst = r.Whole.Emit(dst, 0, statstable.Whole(st))
	for in := range r.layout.Instances() {
		dst = r.shards.Emit(dst, in, statstable.Ring(r.layout, st, in))
	}
	return dst, nil
}
