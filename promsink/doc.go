// Package promsink exports the counters of this repository's sinks to
// Prometheus: a prometheus.Collector for a [sink.Sink]
// ([NewSinkCollector]) and one for a [slogsink.Handler]
// ([NewHandlerCollector]); package
// [github.com/shardedsink/shardedsink/promsink/natsprom], a module of its
// own, has the one for a natssink sink.
//
//	s := sink.MustNew(sink.Config[Event]{Name: "events"}, action)
//	prometheus.MustRegister(promsink.NewSinkCollector(s))
//	http.Handle("/metrics", promhttp.Handler())
//
// # Model
//
// A collector holds nothing but the sink and the descriptors and label
// pairs of its series, made once by the constructor. Each scrape calls the
// sink's Stats once and turns the snapshot into samples: no counter,
// instrument or lock is added to the push path, and Stats stays the one
// source of every number. A scrape reads the sink with sink.ReadStats into
// a Stats kept for the next scrape, so that it allocates one slice holding
// every sample it sends and nothing else (the figures: BenchmarkCollect in
// bench_test.go, and docs/benchmarks.md).
//
// Every series carries the label sink: Config.Name of a sink or a natssink
// sink, the name given to NewHandlerCollector for a handler. Two sinks of
// one name cannot be registered on one registry. The ring series are the
// totals over the shards, or with [WithPerShard] one series per shard with
// a shard label ("0", "1", ...); sum by (sink) gives the totals back.
// Counters are the counts since the sink was made, never reset.
//
// # Series of a sink's rings
//
// From sink.Stats; [NewSinkCollector] exports these, and natsprom exports
// them for a natssink sink's rings:
//
//	shardedsink_queued_values            gauge    values waiting in the rings (not those already in a batch)
//	shardedsink_queued_bytes             gauge    Config.SizeOf of the values in the rings and in batches whose
//	                                              Drain has not returned (0 without MaxQueuedBytes)
//	shardedsink_capacity_values          gauge    slots of the rings: Shards x RingCapacity (per shard: RingCapacity)
//	shardedsink_dropped_total            counter  values dropped, by reason (disjoint; their sum is Stats.Dropped):
//	                                              reason="full": every ring the push tried was full in slots
//	                                              (Stats.DroppedForSlots: Dropped less the five reasons below)
//	                                              reason="bytes": the shard's share of MaxQueuedBytes was spent (DroppedForBytes)
//	                                              reason="waited_out": a PushWait whose ctx ended before room came (WaitedOut)
//	                                              reason="after_shutdown": pushed once Shutdown had begun (DroppedAfterShutdown)
//	                                              reason="displaced": pushed out of a full ring by DropOldest (Displaced)
//	                                              reason="disk": the spill tier was full or off, or lost the value (DroppedForDisk)
//	shardedsink_waiting_pushes           gauge    PushWait calls parked for room (Waiting)
//	shardedsink_drained_total            counter  values taken from the rings and handed to Drain (a call still running included)
//	shardedsink_drain_panics_total       counter  Drain calls that panicked or called runtime.Goexit (each lost its batch)
//	shardedsink_hand_offs_total          counter  pushes into a full ring that parked for a worker short of CPU (HandOffs)
//	shardedsink_max_drain_time_seconds   gauge    the longest recent Drain call (MaxDrainTime): long while rings fill,
//	                                              a slow destination
//	shardedsink_max_worker_delay_seconds gauge    the longest recent return of a worker to its backlog
//	                                              (MaxWorkerDelay): long while max_drain_time_seconds is short,
//	                                              workers short of CPU
//	shardedsink_spilled_total            counter  values moved from the rings to the spill tier on disk (Config.Spill)
//	shardedsink_spill_queued_values      gauge    values the spill tier holds on disk for Drain (SpillQueued)
//	shardedsink_spill_bytes              gauge    bytes of the spill tier's files (never per shard)
//	shardedsink_spill_drained_total      counter  spilled values read back and handed to Drain (SpillDrained; never per shard)
//	shardedsink_recovered_total          counter  values an earlier sink on the directory left, handed to Drain (never per shard)
//	shardedsink_spill_lost_total         counter  values the tier lost, of those dropped for the disk (never per shard)
//	shardedsink_spill_errors_total       counter  failed disk and Codec operations of the tier (never per shard)
//	shardedsink_spill_corrupt_total      counter  torn or corrupt segments, undecodable earlier records (never per shard)
//	shardedsink_shards                   gauge    shards of the sink (never per shard)
//	shardedsink_overloads_total          counter  overload reports of the sink's monitor (Stats.Overloads): checks, one per
//	                                              OverloadInterval at most, that found values dropped since the one
//	                                              before; events, not values (never per shard)
//
// sink.Stats has no count of accepted pushes (keeping one would put a
// shared write on every push): drained + queued is that count once the
// producers have stopped.
//
// # Series of a slogsink handler
//
// From slogsink.Stats; records are log records:
//
//	shardedsink_slog_written_records_total           counter  records in Writes that succeeded
//	shardedsink_slog_dropped_records_total           counter  records shed (ring full in slots or bytes, below KeepLevel,
//	                                                          or handled after Close), by level:
//	                                                          level="debug" (every level below INFO), "info", "warn",
//	                                                          "error" (ERROR and above)
//	shardedsink_slog_dropped_for_bytes_records_total counter  of those dropped, the ones shed for MaxQueuedBytes
//	shardedsink_slog_waited_out_records_total        counter  of those dropped, the ones at or above KeepLevel that
//	                                                          waited Options.KeepWait for room (Stats.WaitedOut)
//	shardedsink_slog_failed_records_total            counter  records lost to an error or a panic in a Write or the
//	                                                          Format handler (Stats.Errors)
//	shardedsink_slog_panics_total                    counter  recovered panics and Goexits in the writer, Format and OnError
//	shardedsink_slog_abandoned_records_total         counter  records accepted but not written: Close's ctx ended first
//	shardedsink_slog_empty_records_total             counter  records the Format handler wrote no bytes for
//	shardedsink_slog_spilled_records_total           counter  records moved to the spill directory (SpillDir) while a Write was slow
//	shardedsink_slog_recovered_records_total         counter  records an earlier writer left in the spill directory, written by this one
//	shardedsink_slog_lost_on_disk_records_total      counter  records the spill tier lost (a failed disk write, a corrupt record)
//	shardedsink_slog_on_disk_records                 gauge    records in the spill directory now
//
// Once the handler is closed and nobody logs, written + dropped + failed +
// abandoned + empty + lost_on_disk + on_disk - recovered is every record
// handled (the last three 0 without a SpillDir; slogsink.Stats has the
// identity).
//
// # Series of any logsink writer
//
// [NewLogCollector] reads any logsink writer, whatever its front-end (a
// zapsink Core or WriteSyncer, a zerologsink Writer, a logsink.Writer),
// from logsink.Stats, which has a slogsink handler's fields: the same
// series under the name of the log, labelled sink="logsink" unless given
// a name (a slogsink handler keeps its own, above):
//
//	shardedsink_log_written_records_total           counter  as shardedsink_slog_written_records_total
//	shardedsink_log_dropped_records_total           counter  as shardedsink_slog_dropped_records_total, by level
//	shardedsink_log_dropped_for_bytes_records_total counter  as shardedsink_slog_dropped_for_bytes_records_total
//	shardedsink_log_waited_out_records_total        counter  as shardedsink_slog_waited_out_records_total
//	shardedsink_log_failed_records_total            counter  as shardedsink_slog_failed_records_total
//	shardedsink_log_panics_total                    counter  as shardedsink_slog_panics_total
//	shardedsink_log_abandoned_records_total         counter  as shardedsink_slog_abandoned_records_total
//	shardedsink_log_empty_records_total             counter  as shardedsink_slog_empty_records_total
//	shardedsink_log_spilled_records_total           counter  as shardedsink_slog_spilled_records_total
//	shardedsink_log_recovered_records_total         counter  as shardedsink_slog_recovered_records_total
//	shardedsink_log_lost_on_disk_records_total      counter  as shardedsink_slog_lost_on_disk_records_total
//	shardedsink_log_on_disk_records                 gauge    as shardedsink_slog_on_disk_records
//
// # Dependencies
//
// This is a module of its own, so that the core needs no Prometheus, and
// it requires neither natssink nor NATS: natsprom is a module of its own
// (go get github.com/shardedsink/shardedsink/promsink/natsprom), so a
// Prometheus user who does not use NATS has no NATS module in the graph.
package promsink

import (
	"github.com/shardedsink/shardedsink/sink"
	"github.com/shardedsink/shardedsink/slogsink"
)

// The doc links above name these packages' types.
var (
	_ *sink.Sink[int]
	_ *slogsink.Handler
)
