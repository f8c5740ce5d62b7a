package promsink

import (
	"cmp"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shardedsink/shardedsink/internal/statstable"
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

// logAt is where a writer's series are read: its Stats, as a whole.
type logAt = statstable.At[logsink.Stats]

// handlerSeries and writerSeries are the series of a slogsink handler
// (shardedsink_slog_*, statstable.Slog) and of any other logsink writer
// (shardedsink_log_*, statstable.Log): slogsink.Stats is logsink.Stats.
// The package doc lists them.
var (
	handlerSeries = series.FromTable[logsink.Stats](statstable.Slog, false)
	writerSeries  = series.FromTable[logsink.Stats](statstable.Log, false)
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
	t    *series.Table[logAt]
	// snaps holds the Stats values that scrapes read into again, so
	// that the series' pointer to one costs no allocation.
	snaps statstable.Snapshots[logsink.Stats]
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
	st := c.snaps.Read(nil, c.read) // a writer has no ReadStats
	defer c.snaps.Put(st)
	series.Send(ch, c.t.Emit(make([]series.Metric, 0, c.t.Size()), 0, statstable.Whole(st)))
}
