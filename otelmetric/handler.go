package otelmetric

import (
	"cmp"
	"log/slog"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

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

const processedDesc = "Records written (no error.type) or not: error.type=queue_full (shed: ring full in slots or bytes below KeepLevel, or handled after Close; by shardedsink.log.level), write_failed (an error or a panic in a Write or the Format handler), abandoned (Close's context ended first), spill_lost (lost by the spill tier: a failed disk write, a corrupt record)."

// logRows are the instruments of a logsink writer, from logsink.Stats,
// in the shape of the SDK's log processor self-metric
// otel.sdk.processor.log.processed, each named with prefix
// ("shardedsink.log.", or "shardedsink.slog." for a slogsink handler,
// whose Stats has the same fields). The package doc lists them; a new
// Stats field is one more row here.
func logRows(prefix string) []instruments.Row[logsink.Stats] {
	processed := prefix + "processed"
	droppedAt := func(l slog.Level, value string) instruments.Row[logsink.Stats] {
		return instruments.Row[logsink.Stats]{Name: processed, Unit: "{record}", Kind: instruments.Counter,
			Desc:  processedDesc,
			Attrs: []attribute.KeyValue{instruments.ErrorType.String("queue_full"), Level.String(value)},
			Read:  func(s logsink.Stats) int64 { return int64(s.DroppedByLevel[l]) }}
	}
	return []instruments.Row[logsink.Stats]{
		{Name: processed, Unit: "{record}", Kind: instruments.Counter, Desc: processedDesc,
			Read: func(s logsink.Stats) int64 { return int64(s.Written) }},
		droppedAt(slog.LevelDebug, "debug"),
		droppedAt(slog.LevelInfo, "info"),
		droppedAt(slog.LevelWarn, "warn"),
		droppedAt(slog.LevelError, "error"),
		{Name: processed, Unit: "{record}", Kind: instruments.Counter, Desc: processedDesc,
			Attrs: []attribute.KeyValue{instruments.ErrorType.String("write_failed")},
			Read:  func(s logsink.Stats) int64 { return int64(s.Errors) }},
		{Name: processed, Unit: "{record}", Kind: instruments.Counter, Desc: processedDesc,
			Attrs: []attribute.KeyValue{instruments.ErrorType.String("abandoned")},
			Read:  func(s logsink.Stats) int64 { return int64(s.Abandoned) }},
		{Name: prefix + "dropped_for_bytes", Unit: "{record}", Kind: instruments.Counter,
			Desc: "Of the records shed (error.type=queue_full), those shed because their shard's share of MaxQueuedBytes was spent.",
			Read: func(s logsink.Stats) int64 { return int64(s.DroppedForBytes) }},
		{Name: prefix + "waited_out", Unit: "{record}", Kind: instruments.Counter,
			Desc: "Of the records shed (error.type=queue_full), those at or above KeepLevel that waited KeepWait for room and found none.",
			Read: func(s logsink.Stats) int64 { return int64(s.WaitedOut) }},
		{Name: prefix + "empty", Unit: "{record}", Kind: instruments.Counter,
			Desc: "Records for which the Format handler wrote no bytes.",
			Read: func(s logsink.Stats) int64 { return int64(s.Empty) }},
		{Name: prefix + "panics", Unit: "{panic}", Kind: instruments.Counter,
			Desc: "Recovered panics and runtime.Goexit calls in the writer, the Format handler and OnError.",
			Read: func(s logsink.Stats) int64 { return int64(s.Panics) }},
		{Name: processed, Unit: "{record}", Kind: instruments.Counter, Desc: processedDesc,
			Attrs: []attribute.KeyValue{instruments.ErrorType.String("spill_lost")},
			Read:  func(s logsink.Stats) int64 { return int64(s.LostOnDisk) }},
		{Name: prefix + "spill.spilled", Unit: "{record}", Kind: instruments.Counter,
			Desc: "Records moved to the spill directory (SpillDir) while a Write was slow.",
			Read: func(s logsink.Stats) int64 { return int64(s.Spilled) }},
		{Name: prefix + "spill.recovered", Unit: "{record}", Kind: instruments.Counter,
			Desc: "Records an earlier writer left in the spill directory, written by this one (in processed).",
			Read: func(s logsink.Stats) int64 { return int64(s.Recovered) }},
		{Name: prefix + "spill.queue.size", Unit: "{record}", Kind: instruments.UpDownCounter,
			Desc: "Records in the spill directory now.",
			Read: func(s logsink.Stats) int64 { return int64(s.OnDisk) }},
	}
}

// handlerRows and writerRows are the instruments of a slogsink handler
// (shardedsink.slog.*) and of any other logsink writer (shardedsink.log.*).
var (
	handlerRows = logRows("shardedsink.slog.")
	writerRows  = logRows("shardedsink.log.")
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
func observeLog(mp metric.MeterProvider, rows []instruments.Row[logsink.Stats], name string, read func() logsink.Stats) (metric.Registration, error) {
	if mp == nil {
		return nil, errNilProvider
	}
	m := mp.Meter(ScopeName)
	t, err := instruments.New(m, rows, name, 0)
	if err != nil {
		return nil, err
	}
	return instruments.Register(m, func(obs metric.Observer) error {
		t.Observe(obs, 0, read())
		return nil
	}, t.Instruments())
}
