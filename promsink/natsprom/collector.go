package natsprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/shardedsink/shardedsink/natssink"
	"github.com/shardedsink/shardedsink/promsink"
	"github.com/shardedsink/shardedsink/promsink/internal/series"
)

// Stats is what [NewCollector] reads: a *natssink.Sink[T] of any T.
type Stats interface {
	Stats() natssink.Stats
}

// natsSeries are the series of a natssink sink beyond its rings', from
// natssink.Stats. The package doc lists them; a new Stats field is one
// more row here.
var natsSeries = []series.Series[natssink.Stats]{
	{Name: "nats_pushed_values_total", Type: prometheus.CounterValue,
		Help: "Calls of Push: dropped, queued, in flight, acked or failed.",
		Read: func(s natssink.Stats) float64 { return float64(s.Pushed) }},
	{Name: "nats_queued_values", Type: prometheus.GaugeValue,
		Help: "Values accepted and not yet published: in the rings or with a worker waiting for room (MaxInFlight).",
		Read: func(s natssink.Stats) float64 { return float64(s.Queued) }},
	{Name: "nats_in_flight_values", Type: prometheus.GaugeValue,
		Help: "Values published and awaiting their ack or a retry; at most MaxInFlight.",
		Read: func(s natssink.Stats) float64 { return float64(s.InFlight) }},
	{Name: "nats_acked_values_total", Type: prometheus.CounterValue,
		Help: "Values the stream acknowledged.",
		Read: func(s natssink.Stats) float64 { return float64(s.Acked) }},
	{Name: "nats_duplicate_acks_total", Type: prometheus.CounterValue,
		Help: "Acks saying the stream already held the value (a retry after a lost ack); each value is in acked once.",
		Read: func(s natssink.Stats) float64 { return float64(s.Duplicates) }},
	{Name: "nats_failed_values_total", Type: prometheus.CounterValue,
		Help: "Values given up: out of attempts or budget, a permanent error, an Encode error, or given up by Shutdown.",
		Read: func(s natssink.Stats) float64 { return float64(s.Failed) }},
	{Name: "nats_retries_total", Type: prometheus.CounterValue,
		Help: "Publishes after a value's first.",
		Read: func(s natssink.Stats) float64 { return float64(s.Retried) }},
}

type natsCollector struct {
	src   Stats
	t     *series.Table[natssink.Stats]
	rings *series.Rings
	// snaps holds the Stats values that scrapes read src into again
	// (through ReadStats, which a *natssink.Sink has), so that a scrape
	// allocates only its metrics.
	snaps series.Snapshots[natssink.Stats]
}

// NewCollector returns a collector of the natssink sink's series and
// of its rings' (see the package doc), labelled sink=Config.Name; with
// [promsink.WithPerShard] the ring series carry a shard label. Each scrape calls
// s.ReadStats (or s.Stats, for a source without it) once and nothing else.
func NewCollector(s Stats, opts ...promsink.Option) prometheus.Collector {
	o := series.Apply(opts)
	st := s.Stats()
	return &natsCollector{src: s, t: series.Compile(natsSeries, st.Name, 0),
		rings: series.NewRings(st.Name, st.Rings.Shards, o.PerShard)}
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
	ms := c.t.Emit(make([]series.Metric, 0, c.t.Size()+c.rings.Size()), 0, *st)
	ms, err := c.rings.Emit(ms, &st.Rings)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.rings.Whole.First(), err)
		return
	}
	series.Send(ch, ms)
}
