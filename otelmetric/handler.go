package otelmetric

import (
	"log/slog"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

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

const processedDesc = "Records written (no error.type) or not: error.type=queue_full (shed: ring full in slots or bytes below KeepLevel, or handled after Close; by shardedsink.log.level), write_failed (an error or a panic in a Write or the Format handler), abandoned (Close's context ended first)."

// droppedAt is the row of the dropped records of level l.
func droppedAt(l slog.Level, value string) instruments.Row[slogsink.Stats] {
	return instruments.Row[slogsink.Stats]{Name: "shardedsink.slog.processed", Unit: "{record}", Kind: instruments.Counter,
		Desc:  processedDesc,
		Attrs: []attribute.KeyValue{instruments.ErrorType.String("queue_full"), Level.String(value)},
		Read:  func(s slogsink.Stats) int64 { return int64(s.DroppedByLevel[l]) }}
}

// handlerRows are the instruments of a slogsink handler, from
// slogsink.Stats, in the shape of the SDK's log processor self-metric
// otel.sdk.processor.log.processed. The package doc lists them; a new
// Stats field is one more row here.
var handlerRows = []instruments.Row[slogsink.Stats]{
	{Name: "shardedsink.slog.processed", Unit: "{record}", Kind: instruments.Counter, Desc: processedDesc,
		Read: func(s slogsink.Stats) int64 { return int64(s.Written) }},
	droppedAt(slog.LevelDebug, "debug"),
	droppedAt(slog.LevelInfo, "info"),
	droppedAt(slog.LevelWarn, "warn"),
	droppedAt(slog.LevelError, "error"),
	{Name: "shardedsink.slog.processed", Unit: "{record}", Kind: instruments.Counter, Desc: processedDesc,
		Attrs: []attribute.KeyValue{instruments.ErrorType.String("write_failed")},
		Read:  func(s slogsink.Stats) int64 { return int64(s.Errors) }},
	{Name: "shardedsink.slog.processed", Unit: "{record}", Kind: instruments.Counter, Desc: processedDesc,
		Attrs: []attribute.KeyValue{instruments.ErrorType.String("abandoned")},
		Read:  func(s slogsink.Stats) int64 { return int64(s.Abandoned) }},
	{Name: "shardedsink.slog.dropped_for_bytes", Unit: "{record}", Kind: instruments.Counter,
		Desc: "Of the records shed (error.type=queue_full), those shed because their shard's share of MaxQueuedBytes was spent.",
		Read: func(s slogsink.Stats) int64 { return int64(s.DroppedForBytes) }},
	{Name: "shardedsink.slog.waited_out", Unit: "{record}", Kind: instruments.Counter,
		Desc: "Of the records shed (error.type=queue_full), those at or above KeepLevel that waited KeepWait for room and found none.",
		Read: func(s slogsink.Stats) int64 { return int64(s.WaitedOut) }},
	{Name: "shardedsink.slog.empty", Unit: "{record}", Kind: instruments.Counter,
		Desc: "Records for which the Format handler wrote no bytes.",
		Read: func(s slogsink.Stats) int64 { return int64(s.Empty) }},
	{Name: "shardedsink.slog.panics", Unit: "{panic}", Kind: instruments.Counter,
		Desc: "Recovered panics and runtime.Goexit calls in the writer, the Format handler and OnError.",
		Read: func(s slogsink.Stats) int64 { return int64(s.Panics) }},
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
	if mp == nil {
		return nil, errNilProvider
	}
	if name == "" {
		name = DefaultHandlerName
	}
	m := mp.Meter(ScopeName)
	t, err := instruments.New(m, handlerRows, name, 0)
	if err != nil {
		return nil, err
	}
	return instruments.Register(m, func(obs metric.Observer) error {
		t.Observe(obs, 0, h.Stats())
		return nil
	}, t.Instruments())
}
