package natsprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/shardedsink/shardedsink/internal/statstable"
	"github.com/shardedsink/shardedsink/natssink"
	"github.com/shardedsink/shardedsink/promsink"
	"github.com/shardedsink/shardedsink/promsink/internal/series"
)

// Stats is what [NewCollector] reads: a *natssink.Sink[T] of any T.
type Stats interface {
	Stats() natssink.Stats
}

// natsSeries are the series of a natssink sink beyond its rings', from
// the rows of natssink.Stats in internal/statstable (NATS). The package
// doc lists them.
var natsSeries = series.FromTable[natssink.Stats](statstable.NATS, false)

type natsCollector struct {
	src   Stats
	t     *series.Table[statstable.At[natssink.Stats]]
	rings *series.Rings
	// snaps holds the Stats values that scrapes read src into again
	// (through ReadStats, which a *natssink.Sink has), so that a scrape
	// allocates only its metrics.
	snaps statstable.Snapshots[natssink.Stats]
}

// NewCollector returns a collector of the natssink sink's series and
// of its rings' (see the package doc), labelled sink=Config.Name; with
// [promsink.WithPerShard] the ring series carry a shard label. Each scrape calls
// s.ReadStats (or s.Stats, for a source without it) once and nothing else.
func NewCollector(s Stats, opts ...promsink.Option) prometheus.Collector {
	o := statstable.Apply(opts)
	st := s.Stats()
	return &natsCollector{src: s, t: series.Compile(natsSeries, st.Name, 0),
		rings: series.NewRings(st.Name, statstable.Layout{Shards: st.Rings.Shards, PerShard: o.PerShard})}
}

// Describe sends the descriptors of every series.
func (c *natsCollector) Describe(ch chan<- *prometheus.Desc) {
	c.t.Describe(ch)
	c.rings.Describe(ch)
}

// Collect reads the sink's Stats and sends its series. It allocates one
// slice holding every metric it sends (and, for a source without
// ReadStats, what its Stats allocates).
func (c *natsCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.snaps.Read(c.src, c.src.Stats)
	defer c.snaps.Put(st)
	ms := c.t.Emit(make([]series.Metric, 0, c.t.Size()+c.rings.Size()), 0, statstable.At[natssink.Stats]{Stats: st, Shard: -1})
	ms, err := c.rings.Emit(ms, &st.Rings)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.rings.Whole.First(), err)
		return
	}
	series.Send(ch, ms)
}
