package promsink

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shardedsink/shardedsink/promsink/internal/series"
	"github.com/shardedsink/shardedsink/slogsink"
)

// HandlerStats is what [NewHandlerCollector] reads: a *slogsink.Handler.
type HandlerStats interface {
	Stats() slogsink.Stats
}

// droppedHelp is the help of the dropped-records family.
const droppedHelp = "Records shed, by level (debug below INFO, info, warn, error and above): ring full in slots or bytes (below KeepLevel), or handled after Close."

// droppedAt is the row of the dropped records of level l, named by value.
func droppedAt(l slog.Level, value string) series.Series[slogsink.Stats] {
	return series.Series[slogsink.Stats]{Name: "slog_dropped_records_total", Type: prometheus.CounterValue,
		Label: "level", Value: value, Help: droppedHelp,
		Read: func(s slogsink.Stats) float64 { return float64(s.DroppedByLevel[l]) }}
}

// handlerSeries are the series of a slogsink handler, from slogsink.Stats.
// The package doc lists them; a new Stats field is one more row here.
var handlerSeries = []series.Series[slogsink.Stats]{
	{Name: "slog_written_records_total", Type: prometheus.CounterValue,
		Help: "Records in Writes that succeeded.",
		Read: func(s slogsink.Stats) float64 { return float64(s.Written) }},
	droppedAt(slog.LevelDebug, "debug"),
	droppedAt(slog.LevelInfo, "info"),
	droppedAt(slog.LevelWarn, "warn"),
	droppedAt(slog.LevelError, "error"),
	{Name: "slog_dropped_for_bytes_records_total", Type: prometheus.CounterValue,
		Help: "Of the records dropped, those shed because their shard's share of MaxQueuedBytes was spent.",
		Read: func(s slogsink.Stats) float64 { return float64(s.DroppedForBytes) }},
	{Name: "slog_waited_out_records_total", Type: prometheus.CounterValue,
		Help: "Of the records dropped, those at or above KeepLevel that waited KeepWait for room and found none.",
		Read: func(s slogsink.Stats) float64 { return float64(s.WaitedOut) }},
	{Name: "slog_failed_records_total", Type: prometheus.CounterValue,
		Help: "Records lost to an error or a panic in a Write or in the Format handler.",
		Read: func(s slogsink.Stats) float64 { return float64(s.Errors) }},
	{Name: "slog_panics_total", Type: prometheus.CounterValue,
		Help: "Recovered panics and runtime.Goexit calls in the writer, the Format handler and OnError.",
		Read: func(s slogsink.Stats) float64 { return float64(s.Panics) }},
	{Name: "slog_abandoned_records_total", Type: prometheus.CounterValue,
		Help: "Records accepted but not written because Close's context ended first.",
		Read: func(s slogsink.Stats) float64 { return float64(s.Abandoned) }},
	{Name: "slog_empty_records_total", Type: prometheus.CounterValue,
		Help: "Records for which the Format handler wrote no bytes.",
		Read: func(s slogsink.Stats) float64 { return float64(s.Empty) }},
}

// DefaultHandlerName is the sink label of a handler's series when
// [NewHandlerCollector] is given no name.
const DefaultHandlerName = "slogsink"

type handlerCollector struct {
	src HandlerStats
	t   *series.Table[slogsink.Stats]
}

// NewHandlerCollector returns a collector of the handler's series (see
// the package doc), labelled sink=name (DefaultHandlerName when name is
// ""): a handler has no name of its own. Each scrape calls h.Stats once
// and nothing else. The handler's series have no shard label, since
// slogsink.Stats has no per-shard counts.
func NewHandlerCollector(h HandlerStats, name string) prometheus.Collector {
	if name == "" {
		name = DefaultHandlerName
	}
	return &handlerCollector{src: h, t: series.Compile(handlerSeries, name, 0)}
}

// Describe sends the descriptors of every series.
func (c *handlerCollector) Describe(ch chan<- *prometheus.Desc) { c.t.Describe(ch) }

// Collect reads the handler's Stats and sends its series. It allocates
// the Stats' map and one slice holding every metric it sends.
func (c *handlerCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.src.Stats()
	series.Send(ch, c.t.Emit(make([]series.Metric, 0, c.t.Size()), 0, st))
}
