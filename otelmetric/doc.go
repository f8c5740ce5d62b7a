// Package otelmetric registers OpenTelemetry observable instruments for
// the counters of this repository's sinks on a user's MeterProvider: for
// a [sink.Sink] ([ObserveSink]) and a [slogsink.Handler]
// ([ObserveHandler]); package
// [github.com/shardedsink/shardedsink/otelmetric/natsmetric], a module of
// its own, has those of a natssink sink.
//
//	s := sink.MustNew(sink.Config[Event]{Name: "events"}, action)
//	reg, err := otelmetric.ObserveSink(otel.GetMeterProvider(), s)
//	...
//	defer reg.Unregister()
//
// # Model
//
// Each Observe function creates its instruments on the meter [ScopeName]
// and registers one callback; at each collection the callback reads the
// sink's Stats once (a sink's with sink.ReadStats, into a Stats kept for
// the next collection) and observes every instrument from that snapshot.
// No instrument is recorded on the push path, and Stats stays the one
// source of every number. The callback of ObserveSink allocates nothing of
// its own; the attribute sets are made once, by the Observe function.
//
// Every observation has the attribute shardedsink.sink.name: Config.Name
// of a sink or a natssink sink, the name given to ObserveHandler for a
// handler. The ring instruments observe the totals over the shards, or
// with [WithPerShard] each shard, with the attribute shardedsink.shard.
// Counters are cumulative since the sink was made.
//
// # Names
//
// The SDK names its own processors' metrics otel.sdk.processor.span.queue.size,
// .queue.capacity and .processed (with error.type=queue_full on the
// items dropped), and its exporters' otel.sdk.exporter.span.exported (with
// error.type) and .inflight. The otel.sdk namespace is the SDK's, so these
// instruments take the same names under shardedsink: a sink is a queue
// that processes values (drops carry error.type), a natssink sink is an
// exporter. Units are UCUM, as in the semantic conventions.
//
// # Instruments of a sink's rings
//
// From sink.Stats; [ObserveSink] creates these, and natsmetric creates
// them for a natssink sink's rings:
//
//	shardedsink.queue.size     updowncounter {value}  values waiting in the rings (not those already in a batch)
//	shardedsink.queue.capacity updowncounter {value}  slots of the rings: Shards x RingCapacity (per shard: RingCapacity)
//	shardedsink.queue.bytes    updowncounter By       Config.SizeOf of the values in the rings and in batches whose
//	                                                  Drain has not returned (0 without MaxQueuedBytes)
//	shardedsink.processed      counter       {value}  values handed to Drain (no error.type; a call still running
//	                                                  included), or dropped:
//	                                                  error.type=queue_full: every ring the push tried was full
//	                                                  in slots (Stats.DroppedForSlots)
//	                                                  error.type=queue_bytes_full: the shard's share of
//	                                                  MaxQueuedBytes was spent (Stats.DroppedForBytes)
//	                                                  error.type=waited_out: a PushWait whose ctx ended before
//	                                                  room came (Stats.WaitedOut)
//	                                                  error.type=shutdown: pushed once Shutdown had begun
//	                                                  (Stats.DroppedAfterShutdown)
//	                                                  error.type=displaced: pushed out of a full ring by
//	                                                  DropOldest (Stats.Displaced)
//	                                                  error.type=disk: the spill tier was full or off, or lost
//	                                                  the value (Stats.DroppedForDisk)
//	shardedsink.queue.waiting  updowncounter {call}   PushWait calls parked for room (Stats.Waiting)
//	shardedsink.drain.panics   counter       {call}   Drain calls that panicked or called runtime.Goexit (each lost its batch)
//	shardedsink.handoffs       counter       {push}   pushes into a full ring that parked for a worker short of CPU
//	                                                  (Stats.HandOffs)
//	shardedsink.drain.max_time updowncounter us       the longest recent Drain call (Stats.MaxDrainTime): long while
//	                                                  rings fill, a slow destination
//	shardedsink.drain.max_worker_delay updowncounter us the longest recent return of a worker to its backlog
//	                                                  (Stats.MaxWorkerDelay): long while drain.max_time is short, workers
//	                                                  short of CPU
//	shardedsink.spill.spilled  counter       {value}  values moved from the rings to the spill tier (Config.Spill)
//	shardedsink.spill.queue.size updowncounter {value} values the spill tier holds on disk for Drain (SpillQueued)
//	shardedsink.spill.bytes    updowncounter By       bytes of the spill tier's files (never per shard)
//	shardedsink.spill.drained  counter       {value}  spilled values read back and handed to Drain (Stats.SpillDrained;
//	                                                  never per shard)
//	shardedsink.spill.recovered counter      {value}  values an earlier sink on the directory left, handed to Drain
//	                                                  (never per shard)
//	shardedsink.spill.lost     counter       {value}  values the tier lost, of those dropped for the disk (never per shard)
//	shardedsink.spill.errors   counter       {error}  failed disk and Codec operations of the tier (never per shard)
//	shardedsink.spill.corrupt  counter       {segment} torn or corrupt segments, undecodable earlier records
//	                                                  (never per shard)
//	shardedsink.shards         updowncounter {shard}  shards of the sink (never per shard)
//	shardedsink.overloads      counter       {event}  overload reports of the sink's monitor (Stats.Overloads): checks,
//	                                                  one per OverloadInterval at most, that found values dropped since
//	                                                  the one before; events, not values (never per shard)
//
// Once the producers have stopped and the sink is drained, the sum of
// shardedsink.processed over error.type is every push.
//
// # Instruments of a slogsink handler
//
// From slogsink.Stats, in the shape of otel.sdk.processor.log.processed:
//
//	shardedsink.slog.processed         counter {record}  records written (no error.type), or not:
//	                                                     error.type=queue_full: shed (a ring full in slots or bytes,
//	                                                     below KeepLevel, or handled after Close), by level:
//	                                                     shardedsink.log.level=debug (every level below INFO),
//	                                                     shardedsink.log.level=info, shardedsink.log.level=warn,
//	                                                     shardedsink.log.level=error (ERROR and above)
//	                                                     error.type=write_failed: an error or a panic in a Write
//	                                                     or the Format handler (Stats.Errors)
//	                                                     error.type=abandoned: Close's context ended first
//	                                                     error.type=spill_lost: lost by the spill tier (a failed
//	                                                     disk write, a corrupt record; Stats.LostOnDisk)
//	shardedsink.slog.dropped_for_bytes counter {record}  of those shed, the ones shed for MaxQueuedBytes
//	shardedsink.slog.waited_out        counter {record}  of those shed, the ones at or above KeepLevel that waited
//	                                                     Options.KeepWait for room (Stats.WaitedOut)
//	shardedsink.slog.empty             counter {record}  records the Format handler wrote no bytes for
//	shardedsink.slog.panics            counter {panic}   recovered panics and Goexits in the writer, Format and OnError
//	shardedsink.slog.spill.spilled     counter {record}  records moved to the spill directory (SpillDir) while a Write
//	                                                     was slow
//	shardedsink.slog.spill.recovered   counter {record}  records an earlier writer left there, written by this one
//	                                                     (counted in processed too)
//	shardedsink.slog.spill.queue.size  updowncounter {record} records in the spill directory now
//
// Once the handler is closed and nobody logs, the sum of
// shardedsink.slog.processed, shardedsink.slog.empty and
// shardedsink.slog.spill.queue.size, less shardedsink.slog.spill.recovered,
// is every record handled.
//
// # Instruments of any logsink writer
//
// [ObserveLog] reads any logsink writer, whatever its front-end (a zapsink
// Core or WriteSyncer, a zerologsink Writer, a logsink.Writer), from
// logsink.Stats, which has a slogsink handler's fields: the same
// instruments under the name of the log (a slogsink handler keeps its
// own, above), with shardedsink.sink.name "logsink" unless given a name:
//
//	shardedsink.log.processed          counter {record}  as shardedsink.slog.processed, with its error.type and levels
//	shardedsink.log.dropped_for_bytes  counter {record}  as shardedsink.slog.dropped_for_bytes
//	shardedsink.log.waited_out         counter {record}  as shardedsink.slog.waited_out
//	shardedsink.log.empty              counter {record}  as shardedsink.slog.empty
//	shardedsink.log.panics             counter {panic}   as shardedsink.slog.panics
//	shardedsink.log.spill.spilled      counter {record}  as shardedsink.slog.spill.spilled
//	shardedsink.log.spill.recovered    counter {record}  as shardedsink.slog.spill.recovered
//	shardedsink.log.spill.queue.size   updowncounter {record} as shardedsink.slog.spill.queue.size
//
// # Dependencies
//
// This is a module of its own, so that the core needs no OpenTelemetry,
// and it requires neither natssink nor NATS: natsmetric is a module of its
// own (go get github.com/shardedsink/shardedsink/otelmetric/natsmetric),
// so an OpenTelemetry user who does not use NATS has no NATS module in the
// graph.
package otelmetric

import (
	"github.com/shardedsink/shardedsink/sink"
	"github.com/shardedsink/shardedsink/slogsink"
)

// The doc links above name these packages' types.
var (
	_ *sink.Sink[int]
	_ *slogsink.Handler
)
