// Package statstable is the one table of the Stats fields that this
// repository's metrics modules export: promsink and otelmetric for a
// sink's Stats, promsink/natsprom and otelmetric/natsmetric for a
// natssink sink's. Each row names the field it reads, whether it is a
// counter or a gauge, its unit and help, and its name in Prometheus and
// in OpenTelemetry; each module renders its series or instruments from
// the rows, so that a new Stats field is one row here. A test fails while
// a counter or gauge of sink.Stats, sink.ShardStats, natssink.Stats or
// logsink.Stats has no row.
//
// The package imports nothing of the repository: internal/ is the floor
// that sink itself stands on. It reads a Stats by its fields' names,
// through package reflect ([Compile]), and holds what the modules' reads
// share besides: a pool of the Stats that scrapes read into ([Snapshots])
// and their per-shard option ([Options]).
package statstable

import (
	"log/slog"
	"slices"
	"strings"
)

// Kind is what a row's figure is.
type Kind uint8

const (
	// Counter is a count since the sink was made: it only goes up. A
	// Prometheus counter, an OpenTelemetry Int64ObservableCounter.
	Counter Kind = iota + 1
	// Gauge is a level at the snapshot. A Prometheus gauge, an
	// OpenTelemetry Int64ObservableUpDownCounter.
	Gauge
)

// Nanoseconds is the unit of a row that reads a time.Duration. The
// modules give it in their own: Prometheus in seconds, OpenTelemetry in
// whole microseconds ("us").
const Nanoseconds = "ns"

// Name is a row's name in one of the modules.
type Name struct {
	// Metric is the metric's name: for Prometheus without the namespace
	// ("queued_values" for shardedsink_queued_values), for OpenTelemetry
	// the instrument's whole name.
	Metric string
	// Label is the label (the attribute) whose Value tells apart the
	// rows that share Metric, or "". Such a metric's help is in
	// [Families].
	Label, Value string
	// By and ByValue are a second attribute, which splits the rows of
	// one Value further (error.type=queue_full by
	// shardedsink.log.level), or "". OpenTelemetry names only: a
	// promsink series has one label at most.
	By, ByValue string
}

// Row is one figure of a Stats, and its names.
type Row struct {
	// Field is the Stats field the row reads: an integer or a
	// time.Duration. A row of [Rings] reads it from each shard's
	// ShardStats (Stats.PerShard[i]), or in total from the Stats, whose
	// field of the same name is the sum over the shards (the maximum, for
	// MaxDrainTime and MaxWorkerDelay).
	Field string
	// Less are fields subtracted from Field: the figure of a reason that
	// has no field of its own (Stats.DroppedForSlots).
	Less []string
	// PerRing marks a Field that the Stats holds for each ring alike
	// (RingCapacity): a shard reads it from the Stats, and the total is
	// it times Stats.Shards.
	PerRing bool
	// Key, where Field is a map[slog.Level]uint64 (logsink.Stats'
	// DroppedByLevel), is the slog.Level whose element the row reads (0
	// where the map lacks it); nil for any other Field.
	Key  any
	Kind Kind
	// Unit is the UCUM unit of the figure, as OpenTelemetry gives it
	// ("{value}", "By"), or Nanoseconds.
	Unit string
	// Help says what the figure counts, in a sentence: the metric's help
	// where the row has a metric of its own.
	Help string
	// Prom and OTel are the row's names in promsink and otelmetric (and
	// natsprom and natsmetric).
	Prom, OTel Name
}

// HelpOf returns the help of the metric that row has under name (its Prom
// or its OTel): the family's, from [Families], where rows share the
// metric, and the row's own otherwise.
func HelpOf(row Row, name Name) string {
	if h, ok := Families[name.Metric]; ok {
		return h
	}
	return row.Help
}

// Families holds the help of the metrics that several rows share, told
// apart by a label, by their Name.Metric; it says what each label value
// means (a test checks that it names every one).
var Families = map[string]string{
	"dropped_total": "Values dropped, by reason: full (every ring tried was full in slots), bytes (MaxQueuedBytes spent), " +
		"waited_out (a PushWait whose context ended before room came), after_shutdown (pushed once Shutdown had begun), " +
		"displaced (pushed out of a full ring by DropOldest), disk (the spill tier was full or off, or lost the value).",
	"shardedsink.processed": "Values handed to Drain (no error.type) or dropped: error.type=queue_full (every ring tried was full in slots), " +
		"queue_bytes_full (MaxQueuedBytes spent), waited_out (a PushWait whose context ended before room came), " +
		"shutdown (pushed once Shutdown had begun), displaced (pushed out of a full ring by DropOldest), " +
		"disk (the spill tier was full or off, or lost the value).",
	"log_dropped_records_total":  logDropped,
	"slog_dropped_records_total": logDropped,
	"shardedsink.log.processed":  logProcessed,
	"shardedsink.slog.processed": logProcessed,
	"shardedsink.nats.exported": "Values the stream acknowledged (no error.type) or given up: error.type=failed " +
		"(out of attempts or budget, a permanent or an Encode error, or given up by Shutdown).",
}

// logDropped and logProcessed are the help of the families of [Log] and
// [Slog].
const (
	logDropped = "Records shed, by level: debug (below INFO), info (INFO), warn (WARN), error (ERROR and above); " +
		"each found its ring full in slots or bytes (below KeepLevel), or came after Close."
	logProcessed = "Records written (no error.type) or not: error.type=queue_full (shed: ring full in slots or bytes below KeepLevel, " +
		"or handled after Close; by shardedsink.log.level), write_failed (an error or a panic in a Write or the Format handler), " +
		"abandoned (Close's context ended first), spill_lost (lost by the spill tier: a failed disk write, a corrupt record)."
)

// dropped is the row of a reason of Stats.Dropped: a value of
// dropped_total's reason label and of shardedsink.processed's error.type.
func dropped(field, reason, errorType, help string, less ...string) Row {
	return Row{Field: field, Less: less, Kind: Counter, Unit: "{value}", Help: help,
		Prom: Name{Metric: "dropped_total", Label: "reason", Value: reason},
		OTel: Name{Metric: "shardedsink.processed", Label: "error.type", Value: errorType}}
}

// Rings are the rows of a sink's rings, from sink.Stats: read per shard
// (from PerShard) or in total. Prometheus names follow its conventions;
// OpenTelemetry names follow the SDK's self-metrics of its processors
// (otel.sdk.processor.span.queue.size, .queue.capacity, .processed with
// error.type=queue_full) under the shardedsink namespace.
var Rings = []Row{
	{Field: "Queued", Kind: Gauge, Unit: "{value}",
		Help: "Values waiting in the rings (not those already in a batch being drained).",
		Prom: Name{Metric: "queued_values"}, OTel: Name{Metric: "shardedsink.queue.size"}},
	{Field: "QueuedBytes", Kind: Gauge, Unit: "By",
		Help: "Sizes (Config.SizeOf) of the values in the rings and in batches whose Drain has not returned; 0 without MaxQueuedBytes.",
		Prom: Name{Metric: "queued_bytes"}, OTel: Name{Metric: "shardedsink.queue.bytes"}},
	{Field: "RingCapacity", PerRing: true, Kind: Gauge, Unit: "{value}",
		Help: "Slots of the rings: the most values they hold.",
		Prom: Name{Metric: "capacity_values"}, OTel: Name{Metric: "shardedsink.queue.capacity"}},
	dropped("Dropped", "full", "queue_full", "Pushes refused because every ring they tried was full in slots.",
		"DroppedForBytes", "WaitedOut", "DroppedAfterShutdown", "Displaced", "DroppedForDisk"),
	dropped("DroppedForBytes", "bytes", "queue_bytes_full", "Pushes refused because their shard's share of MaxQueuedBytes was spent."),
	dropped("WaitedOut", "waited_out", "waited_out", "PushWait calls whose context ended before their shard had room."),
	dropped("DroppedAfterShutdown", "after_shutdown", "shutdown", "Pushes dropped once Shutdown had begun."),
	dropped("Displaced", "displaced", "displaced", "Values pushed out of a full ring by DropOldest."),
	dropped("DroppedForDisk", "disk", "disk", "Pushes refused while the spill tier could take nothing (full, or off after a failed write), and values it lost."),
	{Field: "Waiting", Kind: Gauge, Unit: "{call}",
		Help: "PushWait calls parked for room at the snapshot.",
		Prom: Name{Metric: "waiting_pushes"}, OTel: Name{Metric: "shardedsink.queue.waiting"}},
	{Field: "Drained", Kind: Counter, Unit: "{value}",
		Help: "Values taken from the rings and handed to Drain (a Drain call still running included).",
		Prom: Name{Metric: "drained_total"}, OTel: Name{Metric: "shardedsink.processed"}},
	{Field: "DrainPanics", Kind: Counter, Unit: "{call}",
		Help: "Drain calls that panicked or called runtime.Goexit; each lost its batch.",
		Prom: Name{Metric: "drain_panics_total"}, OTel: Name{Metric: "shardedsink.drain.panics"}},
	{Field: "HandOffs", Kind: Counter, Unit: "{push}",
		Help: "Pushes that found their ring full while Drain was not slow and parked for the drain worker (Config.HandOffWait), whether they then went in or were dropped.",
		Prom: Name{Metric: "hand_offs_total"}, OTel: Name{Metric: "shardedsink.handoffs"}},
	{Field: "MaxDrainTime", Kind: Gauge, Unit: Nanoseconds,
		Help: "The longest Drain call of the last one or two OverloadIntervals, one running included: the destination's time. Long while rings fill: a slow destination.",
		Prom: Name{Metric: "max_drain_time_seconds"}, OTel: Name{Metric: "shardedsink.drain.max_time"}},
	{Field: "MaxWorkerDelay", Kind: Gauge, Unit: Nanoseconds,
		Help: "The longest a drain worker took, lately, to come back to its ring after a Drain call returned with values still queued. Long while the longest Drain call is short: workers short of CPU.",
		Prom: Name{Metric: "max_worker_delay_seconds"}, OTel: Name{Metric: "shardedsink.drain.max_worker_delay"}},
	{Field: "Spilled", Kind: Counter, Unit: "{value}",
		Help: "Values moved from the rings to the spill tier on disk (Config.Spill) while Drain was slow.",
		Prom: Name{Metric: "spilled_total"}, OTel: Name{Metric: "shardedsink.spill.spilled"}},
	{Field: "SpillQueued", Kind: Gauge, Unit: "{value}",
		Help: "Values the spill tier holds on disk for Drain.",
		Prom: Name{Metric: "spill_queued_values"}, OTel: Name{Metric: "shardedsink.spill.queue.size"}},
}

// Sink are the rows of a sink as a whole, from sink.Stats: never per
// shard.
var Sink = []Row{
	{Field: "Shards", Kind: Gauge, Unit: "{shard}",
		Help: "Shards (rings, each with its drain worker) of the sink.",
		Prom: Name{Metric: "shards"}, OTel: Name{Metric: "shardedsink.shards"}},
	{Field: "Overloads", Kind: Counter, Unit: "{event}",
		Help: "Overload reports of the sink's monitor: checks, one per OverloadInterval at most, that found values dropped since the one before (events, not values).",
		Prom: Name{Metric: "overloads_total"}, OTel: Name{Metric: "shardedsink.overloads"}},
	{Field: "SpillBytes", Kind: Gauge, Unit: "By",
		Help: "Bytes of the spill tier's files.",
		Prom: Name{Metric: "spill_bytes"}, OTel: Name{Metric: "shardedsink.spill.bytes"}},
	{Field: "SpillDrained", Kind: Counter, Unit: "{value}",
		Help: "Spilled values read back from disk and handed to Drain.",
		Prom: Name{Metric: "spill_drained_total"}, OTel: Name{Metric: "shardedsink.spill.drained"}},
	{Field: "Recovered", Kind: Counter, Unit: "{value}",
		Help: "Values an earlier sink on the spill directory left, handed to Drain by this one.",
		Prom: Name{Metric: "recovered_total"}, OTel: Name{Metric: "shardedsink.spill.recovered"}},
	{Field: "SpillLost", Kind: Counter, Unit: "{value}",
		Help: "Values the spill tier lost (a failed write's, a Codec's error, a corrupt record's): of those dropped for the disk.",
		Prom: Name{Metric: "spill_lost_total"}, OTel: Name{Metric: "shardedsink.spill.lost"}},
	{Field: "SpillErrors", Kind: Counter, Unit: "{error}",
		Help: "Failed disk and Codec operations of the spill tier.",
		Prom: Name{Metric: "spill_errors_total"}, OTel: Name{Metric: "shardedsink.spill.errors"}},
	{Field: "SpillCorrupt", Kind: Counter, Unit: "{segment}",
		Help: "Torn or corrupt spill segments, and undecodable records of an earlier sink, that were skipped.",
		Prom: Name{Metric: "spill_corrupt_total"}, OTel: Name{Metric: "shardedsink.spill.corrupt"}},
}

// NATS are the rows of a natssink sink beyond its rings' (which [Rings]
// and [Sink] read from its Stats.Rings), from natssink.Stats. Its Dropped,
// WaitedOut and Recovered are the rings' own, exported there.
// OpenTelemetry names follow the SDK's exporter self-metrics
// (otel.sdk.exporter.span.exported with error.type, .inflight).
var NATS = []Row{
	{Field: "Pushed", Kind: Counter, Unit: "{value}",
		Help: "Calls of Push: dropped, queued, in flight, acked or failed.",
		Prom: Name{Metric: "nats_pushed_values_total"}, OTel: Name{Metric: "shardedsink.nats.pushed"}},
	{Field: "Queued", Kind: Gauge, Unit: "{value}",
		Help: "Values accepted and not yet published: in the rings, on disk, or with a worker waiting for room (MaxInFlight).",
		Prom: Name{Metric: "nats_queued_values"}, OTel: Name{Metric: "shardedsink.nats.queued"}},
	{Field: "InFlight", Kind: Gauge, Unit: "{value}",
		Help: "Values published and awaiting their ack or a retry; at most MaxInFlight.",
		Prom: Name{Metric: "nats_in_flight_values"}, OTel: Name{Metric: "shardedsink.nats.inflight"}},
	{Field: "InFlightBytes", Kind: Gauge, Unit: "By",
		Help: "Payload bytes of the values in flight; at most about MaxInFlightBytes.",
		Prom: Name{Metric: "nats_in_flight_bytes"}, OTel: Name{Metric: "shardedsink.nats.inflight_bytes"}},
	{Field: "Acked", Kind: Counter, Unit: "{value}",
		Help: "Values the stream acknowledged.",
		Prom: Name{Metric: "nats_acked_values_total"}, OTel: Name{Metric: "shardedsink.nats.exported"}},
	{Field: "Failed", Kind: Counter, Unit: "{value}",
		Help: "Values given up: out of attempts or budget, a permanent error, an Encode error, or given up by Shutdown.",
		Prom: Name{Metric: "nats_failed_values_total"}, OTel: Name{Metric: "shardedsink.nats.exported", Label: "error.type", Value: "failed"}},
	{Field: "Duplicates", Kind: Counter, Unit: "{ack}",
		Help: "Acks saying the stream already held the value (a retry after a lost ack); each value is counted once among those acked.",
		Prom: Name{Metric: "nats_duplicate_acks_total"}, OTel: Name{Metric: "shardedsink.nats.duplicates"}},
	{Field: "Batched", Kind: Counter, Unit: "{value}",
		Help: "Of the values acked, those acked by a fast batch (Config.FastBatches).",
		Prom: Name{Metric: "nats_batched_values_total"}, OTel: Name{Metric: "shardedsink.nats.batched"}},
	{Field: "Retried", Kind: Counter, Unit: "{publish}",
		Help: "Publishes after a value's first.",
		Prom: Name{Metric: "nats_retries_total"}, OTel: Name{Metric: "shardedsink.nats.retries"}},
}

// droppedAt is the row of a level of logsink.Stats.DroppedByLevel: a
// value of log_dropped_records_total's level label, and of
// shardedsink.log.processed's error.type=queue_full by
// shardedsink.log.level.
func droppedAt(l slog.Level, level, help string) Row {
	return Row{Field: "DroppedByLevel", Key: l, Kind: Counter, Unit: "{record}", Help: help,
		Prom: Name{Metric: "log_dropped_records_total", Label: "level", Value: level},
		OTel: Name{Metric: "shardedsink.log.processed", Label: "error.type", Value: "queue_full", By: "shardedsink.log.level", ByValue: level}}
}

// Log are the rows of a logsink writer (of any front-end), from
// logsink.Stats, named as promsink and otelmetric name a writer's series
// and instruments (log_, shardedsink.log.); [Slog] are the same under a
// slogsink handler's names. Stats.Dropped is the sum of the
// DroppedByLevel rows. OpenTelemetry names follow the SDK's log
// processor self-metric otel.sdk.processor.log.processed.
var Log = []Row{
	{Field: "Written", Kind: Counter, Unit: "{record}",
		Help: "Records in Writes that succeeded.",
		Prom: Name{Metric: "log_written_records_total"}, OTel: Name{Metric: "shardedsink.log.processed"}},
	droppedAt(slog.LevelDebug, "debug", "Records below INFO shed."),
	droppedAt(slog.LevelInfo, "info", "Records of level INFO shed."),
	droppedAt(slog.LevelWarn, "warn", "Records of level WARN shed."),
	droppedAt(slog.LevelError, "error", "Records of level ERROR and above shed."),
	{Field: "DroppedForBytes", Kind: Counter, Unit: "{record}",
		Help: "Of the records dropped, those shed because their shard's share of MaxQueuedBytes was spent.",
		Prom: Name{Metric: "log_dropped_for_bytes_records_total"}, OTel: Name{Metric: "shardedsink.log.dropped_for_bytes"}},
	{Field: "WaitedOut", Kind: Counter, Unit: "{record}",
		Help: "Of the records dropped, those at or above KeepLevel that waited KeepWait for room and found none.",
		Prom: Name{Metric: "log_waited_out_records_total"}, OTel: Name{Metric: "shardedsink.log.waited_out"}},
	{Field: "Errors", Kind: Counter, Unit: "{record}",
		Help: "Records lost to an error or a panic in a Write or in the Format handler.",
		Prom: Name{Metric: "log_failed_records_total"}, OTel: Name{Metric: "shardedsink.log.processed", Label: "error.type", Value: "write_failed"}},
	{Field: "Panics", Kind: Counter, Unit: "{panic}",
		Help: "Recovered panics and runtime.Goexit calls in the writer, the Format handler and OnError.",
		Prom: Name{Metric: "log_panics_total"}, OTel: Name{Metric: "shardedsink.log.panics"}},
	{Field: "Abandoned", Kind: Counter, Unit: "{record}",
		Help: "Records accepted but not written because Close's context ended first.",
		Prom: Name{Metric: "log_abandoned_records_total"}, OTel: Name{Metric: "shardedsink.log.processed", Label: "error.type", Value: "abandoned"}},
	{Field: "Empty", Kind: Counter, Unit: "{record}",
		Help: "Records for which the Format handler wrote no bytes.",
		Prom: Name{Metric: "log_empty_records_total"}, OTel: Name{Metric: "shardedsink.log.empty"}},
	{Field: "Spilled", Kind: Counter, Unit: "{record}",
		Help: "Records moved to the spill directory (SpillDir) while a Write was slow.",
		Prom: Name{Metric: "log_spilled_records_total"}, OTel: Name{Metric: "shardedsink.log.spill.spilled"}},
	{Field: "Recovered", Kind: Counter, Unit: "{record}",
		Help: "Records an earlier writer left in the spill directory, written by this one.",
		Prom: Name{Metric: "log_recovered_records_total"}, OTel: Name{Metric: "shardedsink.log.spill.recovered"}},
	{Field: "LostOnDisk", Kind: Counter, Unit: "{record}",
		Help: "Records the spill tier lost (a failed disk write, a corrupt record).",
		Prom: Name{Metric: "log_lost_on_disk_records_total"}, OTel: Name{Metric: "shardedsink.log.processed", Label: "error.type", Value: "spill_lost"}},
	{Field: "OnDisk", Kind: Gauge, Unit: "{record}",
		Help: "Records in the spill directory now.",
		Prom: Name{Metric: "log_on_disk_records"}, OTel: Name{Metric: "shardedsink.log.spill.queue.size"}},
}

// Slog are the rows of [Log] under the names of a slogsink handler's
// series and instruments (slog_, shardedsink.slog.), from slogsink.Stats,
// which is logsink.Stats.
var Slog = renamed(Log, "log_", "slog_", "shardedsink.log.", "shardedsink.slog.")

// renamed returns rows with their Prom names' prefix prom in place of
// fromProm and their OTel names' otel in place of fromOTel.
func renamed(rows []Row, fromProm, prom, fromOTel, otel string) []Row {
	out := slices.Clone(rows)
	for i := range out {
		out[i].Prom.Metric = prom + strings.TrimPrefix(out[i].Prom.Metric, fromProm)
		out[i].OTel.Metric = otel + strings.TrimPrefix(out[i].OTel.Metric, fromOTel)
	}
	return out
}
