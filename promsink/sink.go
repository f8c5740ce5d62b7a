package promsink

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/shardedsink/shardedsink/internal/statstable"
	"github.com/shardedsink/shardedsink/promsink/internal/series"
	"github.com/shardedsink/shardedsink/sink"
)

// SinkStats is what [NewSinkCollector] reads: a *sink.Sink[T] of any T.
type SinkStats interface {
	Stats() sink.Stats
}

type sinkCollector struct {
	src   SinkStats
	rings *series.Rings
	// snaps holds the Stats values that scrapes read src into again
	// (through ReadStats, which a *sink.Sink has), so that a scrape
	// allocates only its metrics.
	snaps statstable.Snapshots[sink.Stats]
}

// NewSinkCollector returns a collector of the sink's series (see the
// package doc), labelled sink=Config.Name; it calls s.Stats once to learn
// the name and the shard count. Each scrape calls s.Stats once and nothing
// else: the sink's push path is untouched. Register it with
// prometheus.MustRegister (or a Registry's Register); two sinks of one
// name cannot both be registered on one registry.
func NewSinkCollector(s SinkStats, opts ...Option) prometheus.Collector {
	o := statstable.Apply(opts)
	st := s.Stats()
	return &sinkCollector{src: s, rings: series.NewRings(st.Name, statstable.Layout{Shards: st.Shards, PerShard: o.PerShard})}
}

// Describe sends the descriptors of every series.
func (c *sinkCollector) Describe(ch chan<- *prometheus.Desc) { c.rings.Describe(ch) }

// Collect reads the sink's Stats and sends its series. It allocates one
// slice holding every metric it sends (and, for a source without
// ReadStats, the Stats' per-shard slice).
func (c *sinkCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.snaps.Read(c.src, c.src.Stats)
	defer c.snaps.Put(st)
	ms, err := c.rings.Emit(make([]series.Metric, 0, c.rings.Size()), st)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.rings.Whole.First(), err)
		return
	}
	series.Send(ch, ms)
}
