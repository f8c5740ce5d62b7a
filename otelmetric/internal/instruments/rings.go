package instruments

import (
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/shardedsink/shardedsink/sink"
)

// ErrorType is the semantic conventions' error.type attribute, which the
// SDK's self-metrics put on the items they did not process.
const ErrorType = attribute.Key("error.type")

// ShardView is what the ring instruments read: one shard's stats and the
// capacity of its ring, or the sink's totals as one shard (totals).
type ShardView struct {
	sink.ShardStats
	Capacity int
}

// RingRows are the instruments of a sink's rings, from sink.ShardStats,
// named as the SDK names its processors' self-metrics
// (otel.sdk.processor.span.queue.size, .queue.capacity, .processed with
// error.type=queue_full) under the shardedsink namespace. The package doc
// lists them; a new ShardStats field is one more row here and its total
// in totals.
var RingRows = []Row[ShardView]{
	{Name: "shardedsink.queue.size", Unit: "{value}", Kind: UpDownCounter,
		Desc: "Values waiting in the rings, not those already in a batch being drained.",
		Read: func(s ShardView) int64 { return int64(s.Queued) }},
	{Name: "shardedsink.queue.capacity", Unit: "{value}", Kind: UpDownCounter,
		Desc: "Slots of the rings: the most values they hold.",
		Read: func(s ShardView) int64 { return int64(s.Capacity) }},
	{Name: "shardedsink.queue.bytes", Unit: "By", Kind: UpDownCounter,
		Desc: "Sizes (Config.SizeOf) of the values in the rings and in batches whose Drain has not returned; 0 without MaxQueuedBytes.",
		Read: func(s ShardView) int64 { return s.QueuedBytes }},
	processed("", func(s ShardView) uint64 { return s.Drained }),
	processed("queue_full", func(s ShardView) uint64 { return s.DroppedForSlots() }),
	processed("queue_bytes_full", func(s ShardView) uint64 { return s.DroppedForBytes }),
	processed("waited_out", func(s ShardView) uint64 { return s.WaitedOut }),
	processed("shutdown", func(s ShardView) uint64 { return s.DroppedAfterShutdown }),
	processed("displaced", func(s ShardView) uint64 { return s.Displaced }),
	processed("disk", func(s ShardView) uint64 { return s.DroppedForDisk }),
	{Name: "shardedsink.queue.waiting", Unit: "{call}", Kind: UpDownCounter,
		Desc: "PushWait calls parked for room at the collection.",
		Read: func(s ShardView) int64 { return int64(s.Waiting) }},
	{Name: "shardedsink.drain.panics", Unit: "{call}", Kind: Counter,
		Desc: "Drain calls that panicked or called runtime.Goexit; each lost its batch.",
		Read: func(s ShardView) int64 { return int64(s.DrainPanics) }},
	{Name: "shardedsink.handoffs", Unit: "{push}", Kind: Counter,
		Desc: "Pushes that found their ring full while Drain was not slow and parked for the drain worker (Config.HandOffWait), whether they then went in or were dropped.",
		Read: func(s ShardView) int64 { return int64(s.HandOffs) }},
	{Name: "shardedsink.drain.max_time", Unit: "us", Kind: UpDownCounter,
		Desc: "The longest Drain call of the last one or two OverloadIntervals, one running included: the destination's time. Long while rings fill: a slow destination.",
		Read: func(s ShardView) int64 { return s.MaxDrainTime.Microseconds() }},
	{Name: "shardedsink.drain.max_worker_delay", Unit: "us", Kind: UpDownCounter,
		Desc: "The longest a drain worker took, lately, to come back to its ring after a Drain call returned with values still queued. Long while drain.max_time is short: workers short of CPU.",
		Read: func(s ShardView) int64 { return s.MaxWorkerDelay.Microseconds() }},
	{Name: "shardedsink.spill.spilled", Unit: "{value}", Kind: Counter,
		Desc: "Values moved from the rings to the spill tier on disk (Config.Spill) while Drain was slow.",
		Read: func(s ShardView) int64 { return int64(s.Spilled) }},
	{Name: "shardedsink.spill.queue.size", Unit: "{value}", Kind: UpDownCounter,
		Desc: "Values the spill tier holds on disk for Drain.",
		Read: func(s ShardView) int64 { return int64(s.SpillQueued) }},
}

// processedDesc is the description of shardedsink.processed, whose rows
// are the values drained and the reasons of the values dropped.
const processedDesc = "Values handed to Drain (no error.type) or dropped: error.type=queue_full (every ring tried was full in slots), " +
	"queue_bytes_full (MaxQueuedBytes spent), waited_out (a PushWait whose context ended before room came), " +
	"shutdown (pushed once Shutdown had begun), displaced (pushed out of a full ring by DropOldest), " +
	"disk (the spill tier was full or off, or lost the value)."

// processed is the shardedsink.processed row of one error.type ("" for
// the values drained).
func processed(errorType string, count func(ShardView) uint64) Row[ShardView] {
	r := Row[ShardView]{Name: "shardedsink.processed", Unit: "{value}", Kind: Counter, Desc: processedDesc,
		Read: func(s ShardView) int64 { return int64(count(s)) }}
	if errorType != "" {
		r.Attrs = []attribute.KeyValue{ErrorType.String(errorType)}
	}
	return r
}

// SinkRows are the instruments of a sink as a whole, from sink.Stats.
var SinkRows = []Row[sink.Stats]{
	{Name: "shardedsink.shards", Unit: "{shard}", Kind: UpDownCounter,
		Desc: "Shards (rings, each with its drain worker) of the sink.",
		Read: func(s sink.Stats) int64 { return int64(s.Shards) }},
	{Name: "shardedsink.overloads", Unit: "{event}", Kind: Counter,
		Desc: "Overload reports of the sink's monitor: checks, one per OverloadInterval at most, that found values dropped since the one before (events, not values).",
		Read: func(s sink.Stats) int64 { return int64(s.Overloads) }},
	{Name: "shardedsink.spill.bytes", Unit: "By", Kind: UpDownCounter,
		Desc: "Bytes of the spill tier's files.",
		Read: func(s sink.Stats) int64 { return s.SpillBytes }},
	{Name: "shardedsink.spill.drained", Unit: "{value}", Kind: Counter,
		Desc: "Spilled values read back from disk and handed to Drain.",
		Read: func(s sink.Stats) int64 { return int64(s.SpillDrained) }},
	{Name: "shardedsink.spill.recovered", Unit: "{value}", Kind: Counter,
		Desc: "Values an earlier sink on the spill directory left, handed to Drain by this one.",
		Read: func(s sink.Stats) int64 { return int64(s.Recovered) }},
	{Name: "shardedsink.spill.errors", Unit: "{error}", Kind: Counter,
		Desc: "Failed disk and Codec operations of the spill tier.",
		Read: func(s sink.Stats) int64 { return int64(s.SpillErrors) }},
	{Name: "shardedsink.spill.corrupt", Unit: "{segment}", Kind: Counter,
		Desc: "Torn or corrupt spill segments, and undecodable records of an earlier sink, that were skipped.",
		Read: func(s sink.Stats) int64 { return int64(s.SpillCorrupt) }},
}

// Rings is the ring and sink instruments of one sink.
type Rings struct {
	whole  *Table[sink.Stats]
	shards *Table[ShardView]
	n      int  // the sink's shard count, fixed at New
	per    bool // one instance per shard
}

// NewRings creates the ring and sink instruments of the sink named name,
// of n shards, per shard when per is set.
func NewRings(m metric.Meter, name string, n int, per bool) (*Rings, error) {
	whole, err := New(m, SinkRows, name, 0)
	if err != nil {
		return nil, err
	}
	shards := 0
	if per {
		shards = n
	}
	sh, err := New(m, RingRows, name, shards)
	if err != nil {
		return nil, err
	}
	return &Rings{whole: whole, shards: sh, n: n, per: per}, nil
}

// Instruments returns the instruments, for RegisterCallback.
func (r *Rings) Instruments() []metric.Observable {
	return append(r.whole.Instruments()[:len(r.whole.Instruments()):len(r.whole.Instruments())], r.shards.Instruments()...)
}

// Observe observes st, or returns an error when st does not have the
// shard count the instruments were made for.
func (r *Rings) Observe(o metric.Observer, st *sink.Stats) error {
	if len(st.PerShard) != r.n {
		return fmt.Errorf("otelmetric: sink %q reports %d shards, the instruments were made for %d", st.Name, len(st.PerShard), r.n)
	}
	r.whole.Observe(o, 0, *st)
	if r.per {
		for i := range st.PerShard {
			r.shards.Observe(o, i, ShardView{st.PerShard[i], st.RingCapacity})
		}
		return nil
	}
	r.shards.Observe(o, 0, totals(st))
	return nil
}

// totals is the sink as one shard: Stats' totals (each the sum of
// PerShard, by Stats' contract) and the capacity of all the rings. A new
// ShardStats field that RingRows reads gets its total here.
func totals(st *sink.Stats) ShardView {
	return ShardView{Capacity: st.Shards * st.RingCapacity, ShardStats: sink.ShardStats{
		Shard:           -1,
		Dropped:         st.Dropped,
		Queued:          st.Queued,
		Drained:         st.Drained,
		DrainPanics:     st.DrainPanics,
		DroppedForBytes: st.DroppedForBytes,
		QueuedBytes:     st.QueuedBytes,
		WaitedOut:       st.WaitedOut,
		Waiting:         st.Waiting,

		DroppedAfterShutdown: st.DroppedAfterShutdown,
		Displaced:            st.Displaced,
		HandOffs:             st.HandOffs,
		MaxDrainTime:         st.MaxDrainTime,
		MaxWorkerDelay:       st.MaxWorkerDelay,
		DroppedForDisk:       st.DroppedForDisk,
		Spilled:              st.Spilled,
		SpillQueued:          st.SpillQueued,
	}}
}
