package promsink

import (
	"cmp"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/promsink/internal/series"
	"github.com/shardedsink/shardedsink/slogsink"
)

// HandlerStats is what [NewHandlerCollector] reads: a *slogsink.Handler.
type HandlerStats interface {
	Stats() slogsink.Stats
}

// LogStats is what [NewLogCollector] reads: any logsink writer, whatever
// its front-end (a *logsink.Writer, a *zapsink.Core or *zapsink.WriteSyncer,
// a *zerologsink.Writer).
type LogStats interface {
	Stats() logsink.Stats
}

// droppedHelp is the help of the dropped-records family.
const droppedHelp = "Records shed, by level (debug below INFO, info, warn, error and above): ring full in slots or bytes (below KeepLevel), or handled after Close."

// logSeries are the series of a logsink writer, from logsink.Stats, each
// named with prefix ("log_", or "slog_" for a slogsink handler, whose
// Stats has the same fields). The package doc lists them; a new Stats
// field is one more row here.
func logSeries(prefix string) []series.Series[logsink.Stats] {
	droppedAt := func(l slog.Level, value string) series.Series[logsink.Stats] {
		return series.Series[logsink.Stats]{Name: prefix + "dropped_records_total", Type: prometheus.CounterValue,
			Label: "level", Value: value, Help: droppedHelp,
			Read: func(s logsink.Stats) float64 { return float64(s.DroppedByLevel[l]) }}
	}
	return []series.Series[logsink.Stats]{
		{Name: prefix + "written_records_total", Type: prometheus.CounterValue,
			Help: "Records in Writes that succeeded.",
			Read: func(s logsink.Stats) float64 { return float64(s.Written) }},
		droppedAt(slog.LevelDebug, "debug"),
		droppedAt(slog.LevelInfo, "info"),
		droppedAt(slog.LevelWarn, "warn"),
		droppedAt(slog.LevelError, "error"),
		{Name: prefix + "dropped_for_bytes_records_total", Type: prometheus.CounterValue,
			Help: "Of the records dropped, those shed because their shard's share of MaxQueuedBytes was spent.",
			Read: func(s logsink.Stats) float64 { return float64(s.DroppedForBytes) }},
		{Name: prefix + "waited_out_records_total", Type: prometheus.CounterValue,
			Help: "Of the records dropped, those at or above KeepLevel that waited KeepWait for room and found none.",
			Read: func(s logsink.Stats) float64 { return float64(s.WaitedOut) }},
		{Name: prefix + "failed_records_total", Type: prometheus.CounterValue,
			Help: "Records lost to an error or a panic in a Write or in the Format handler.",
			Read: func(s logsink.Stats) float64 { return float64(s.Errors) }},
		{Name: prefix + "panics_total", Type: prometheus.CounterValue,
			Help: "Recovered panics and runtime.Goexit calls in the writer, the Format handler and OnError.",
			Read: func(s logsink.Stats) float64 { return float64(s.Panics) }},
		{Name: prefix + "abandoned_records_total", Type: prometheus.CounterValue,
			Help: "Records accepted but not written because Close's context ended first.",
			Read: func(s logsink.Stats) float64 { return float64(s.Abandoned) }},
		{Name: prefix + "empty_records_total", Type: prometheus.CounterValue,
			Help: "Records for which the Format handler wrote no bytes.",
			Read: func(s logsink.Stats) float64 { return float64(s.Empty) }},
		{Name: prefix + "spilled_records_total", Type: prometheus.CounterValue,
			Help: "Records moved to the spill directory (SpillDir) while a Write was slow.",
			Read: func(s logsink.Stats) float64 { return float64(s.Spilled) }},
		{Name: prefix + "recovered_records_total", Type: prometheus.CounterValue,
			Help: "Records an earlier writer left in the spill directory, written by this one.",
			Read: func(s logsink.Stats) float64 { return float64(s.Recovered) }},
		{Name: prefix + "lost_on_disk_records_total", Type: prometheus.CounterValue,
			Help: "Records the spill tier lost (a failed disk write, a corrupt record).",
			Read: func(s logsink.Stats) float64 { return float64(s.LostOnDisk) }},
		{Name: prefix + "on_disk_records", Type: prometheus.GaugeValue,
			Help: "Records in the spill directory now.",
			Read: func(s logsink.Stats) float64 { return float64(s.OnDisk) }},
	}
}

// handlerSeries and writerSeries are the series of a slogsink handler
// (shardedsink_slog_*) and of any other logsink writer (shardedsink_log_*).
var (
	handlerSeries = logSeries("slog_")
	writerSeries  = logSeries("log_")
)

// DefaultHandlerName is the sink label of a handler's series when
// [NewHandlerCollector] is given no name, and DefaultLogName a writer's
// when [NewLogCollector] is.
const (
	DefaultHandlerName = "slogsink"
	DefaultLogName     = "logsink"
)

type handlerCollector struct {
	read func() logsink.Stats
	t    *series.Table[logsink.Stats]
}

// NewHandlerCollector returns a collector of the handler's series (see
// the package doc), labelled sink=name (DefaultHandlerName when name is
// ""): a handler has no name of its own. Each scrape calls h.Stats once
// and nothing else. The handler's series have no shard label, since
// slogsink.Stats has no per-shard counts.
func NewHandlerCollector(h HandlerStats, name string) prometheus.Collector {
	return &handlerCollector{read: func() logsink.Stats { return logsink.Stats(h.Stats()) },
		t: series.Compile(handlerSeries, cmp.Or(name, DefaultHandlerName), 0)}
}

// NewLogCollector returns a collector of the series of w, any logsink
// writer (a zapsink Core or WriteSyncer, a zerologsink Writer, a
// logsink.Writer), labelled sink=name (DefaultLogName when name is ""):
// the shardedsink_log_* series of the package doc, the handler's series
// under the name of the log rather than of slog. Each scrape calls
// w.Stats once and nothing else.
func NewLogCollector(w LogStats, name string) prometheus.Collector {
	return &handlerCollector{read: w.Stats, t: series.Compile(writerSeries, cmp.Or(name, DefaultLogName), 0)}
}

// Describe sends the descriptors of every series.
func (c *handlerCollector) Describe(ch chan<- *prometheus.Desc) { c.t.Describe(ch) }

// Collect reads the handler's Stats and sends its series. It allocates
// the Stats' map and one slice holding every metric it sends.
func (c *handlerCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.read()
	series.Send(ch, c.t.Emit(make([]series.Metric, 0, c.t.Size()), 0, st))
}
