package otelmetric

import (
	"cmp"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/shardedsink/shardedsink/internal/statstable"
	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/otelmetric/internal/instruments"
	"github.com/shardedsink/shardedsink/slogsink"
)

// HandlerStats is what [ObserveHandler] reads: a *slogsink.Handler.
type HandlerStats interface {
	Stats() slogsink.Stats
}

// Level is the attribute of the dropped records' observations: the
// slogsink level bucket ("debug" for every level below INFO, "info",
// "warn", "error" for ERROR and above).
const Level = attribute.Key("shardedsink.log.level")

// logAt is where a writer's instruments are read: its Stats, as a whole.
type logAt = statstable.At[logsink.Stats]

// handlerRows and writerRows are the instruments of a slogsink handler
// (shardedsink.slog.*, statstable.Slog) and of any other logsink writer
// (shardedsink.log.*, statstable.Log), in the shape of the SDK's log
// processor self-metric otel.sdk.processor.log.processed: slogsink.Stats
// is logsink.Stats. The package doc lists them.
var (
	handlerRows = instruments.FromTable[logsink.Stats](statstable.Slog, false)
	writerRows  = instruments.FromTable[logsink.Stats](statstable.Log, false)
)

// LogStats is what [ObserveLog] reads: any logsink writer, whatever its
// front-end (a *logsink.Writer, a *zapsink.Core or *zapsink.WriteSyncer, a
// *zerologsink.Writer).
type LogStats interface {
	Stats() logsink.Stats
}

// DefaultLogName is the shardedsink.sink.name of a writer's observations
// when [ObserveLog] is given no name.
const DefaultLogName = "logsink"

// ObserveLog is [ObserveHandler] for any logsink writer: the same
// instruments under the name of the log (shardedsink.log.*), each
// observation with shardedsink.sink.name = name (DefaultLogName when name
// is ""), and one callback that reads w.Stats at each collection.
func ObserveLog(mp metric.MeterProvider, w LogStats, name string) (metric.Registration, error) {
	return observeLog(mp, writerRows, cmp.Or(name, DefaultLogName), w.Stats)
}

// DefaultHandlerName is the shardedsink.sink.name of a handler's
// observations when [ObserveHandler] is given no name.
const DefaultHandlerName = "slogsink"

// ObserveHandler creates the handler's instruments (see the package doc)
// on mp's meter [ScopeName], each observation with shardedsink.sink.name
// = name (DefaultHandlerName when name is ""; a handler has no name of its
// own), and registers one callback that reads h.Stats at each collection.
// slogsink.Stats has no per-shard counts, so there is no option.
func ObserveHandler(mp metric.MeterProvider, h HandlerStats, name string) (metric.Registration, error) {
	return observeLog(mp, handlerRows, cmp.Or(name, DefaultHandlerName), func() logsink.Stats { return logsink.Stats(h.Stats()) })
}

// observeLog creates the instruments of rows on mp's meter and registers
// the callback that observes read's Stats, named name.
func observeLog(mp metric.MeterProvider, rows []instruments.Row[logAt], name string, read func() logsink.Stats) (metric.Registration, error) {
	if mp == nil {
		return nil, errNilProvider
	}
	m := mp.Meter(ScopeName)
	t, err := instruments.New(m, rows, name, 0)
	if err != nil {
		return nil, err
	}
	// snaps holds the Stats values that collections read into again, so
	// that the rows' pointer to one costs no allocation.
	var snaps statstable.Snapshots[logsink.Stats]
	return instruments.Register(m, func(obs metric.Observer) error {
		st := snaps.Read(nil, read) // a writer has no ReadStats
		defer snaps.Put(st)
		t.Observe(obs, 0, statstable.Whole(st))
		return nil
	}, t.Instruments())
}
