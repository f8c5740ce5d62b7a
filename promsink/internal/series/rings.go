package series

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shardedsink/shardedsink/sink"
)

// ShardView is what the ring series Read: one shard's stats and the
// capacity of its ring. The sink's totals are the sums over its shards, as
// sink.Stats' own totals are.
type ShardView struct {
	sink.ShardStats
	Capacity int
}

// RingSeries are the series of a sink's rings, from sink.ShardStats. The
// package doc lists them; a new ShardStats field is one more row here and
// its total in totals.
var RingSeries = []Series[ShardView]{
	{Name: "queued_values", Type: prometheus.GaugeValue,
		Help: "Values waiting in the rings (not those already in a batch being drained).",
		Read: func(s ShardView) float64 { return float64(s.Queued) }},
	{Name: "queued_bytes", Type: prometheus.GaugeValue,
		Help: "Sizes (Config.SizeOf) of the values in the rings and in batches whose Drain has not returned; 0 without MaxQueuedBytes.",
		Read: func(s ShardView) float64 { return float64(s.QueuedBytes) }},
	{Name: "capacity_values", Type: prometheus.GaugeValue,
		Help: "Slots of the rings: the most values they hold.",
		Read: func(s ShardView) float64 { return float64(s.Capacity) }},
	dropped("full", func(s ShardView) uint64 { return s.DroppedForSlots() }),
	dropped("bytes", func(s ShardView) uint64 { return s.DroppedForBytes }),
	dropped("waited_out", func(s ShardView) uint64 { return s.WaitedOut }),
	dropped("after_shutdown", func(s ShardView) uint64 { return s.DroppedAfterShutdown }),
	dropped("displaced", func(s ShardView) uint64 { return s.Displaced }),
	dropped("disk", func(s ShardView) uint64 { return s.DroppedForDisk }),
	{Name: "waiting_pushes", Type: prometheus.GaugeValue,
		Help: "PushWait calls parked for room at the snapshot.",
		Read: func(s ShardView) float64 { return float64(s.Waiting) }},
	{Name: "drained_total", Type: prometheus.CounterValue,
		Help: "Values taken from the rings and handed to Drain (a Drain call still running included).",
		Read: func(s ShardView) float64 { return float64(s.Drained) }},
	{Name: "drain_panics_total", Type: prometheus.CounterValue,
		Help: "Drain calls that panicked or called runtime.Goexit; each lost its batch.",
		Read: func(s ShardView) float64 { return float64(s.DrainPanics) }},
	{Name: "hand_offs_total", Type: prometheus.CounterValue,
		Help: "Pushes that found their ring full while Drain was not slow and parked for the drain worker (Config.HandOffWait), whether they then went in or were dropped.",
		Read: func(s ShardView) float64 { return float64(s.HandOffs) }},
	{Name: "max_drain_time_seconds", Type: prometheus.GaugeValue,
		Help: "The longest Drain call of the last one or two OverloadIntervals, one running included: the destination's time. Long while rings fill: a slow destination.",
		Read: func(s ShardView) float64 { return s.MaxDrainTime.Seconds() }},
	{Name: "max_worker_delay_seconds", Type: prometheus.GaugeValue,
		Help: "The longest a drain worker took, lately, to come back to its ring after a Drain call returned with values still queued. Long while max_drain_time_seconds is short: workers short of CPU.",
		Read: func(s ShardView) float64 { return s.MaxWorkerDelay.Seconds() }},
	{Name: "spilled_total", Type: prometheus.CounterValue,
		Help: "Values moved from the rings to the spill tier on disk (Config.Spill) while Drain was slow.",
		Read: func(s ShardView) float64 { return float64(s.Spilled) }},
	{Name: "spill_queued_values", Type: prometheus.GaugeValue,
		Help: "Values the spill tier holds on disk for Drain.",
		Read: func(s ShardView) float64 { return float64(s.SpillQueued) }},
}

// droppedHelp is the help of dropped_total, whose rows are its reasons.
const droppedHelp = "Values dropped, by reason: full (every ring tried was full in slots), bytes (MaxQueuedBytes spent), " +
	"waited_out (a PushWait whose context ended before room came), after_shutdown (pushed once Shutdown had begun), " +
	"displaced (pushed out of a full ring by DropOldest), disk (the spill tier was full or off, or lost the value)."

// dropped is the dropped_total row of one reason.
func dropped(reason string, count func(ShardView) uint64) Series[ShardView] {
	return Series[ShardView]{Name: "dropped_total", Type: prometheus.CounterValue, Label: "reason", Value: reason,
		Help: droppedHelp, Read: func(s ShardView) float64 { return float64(count(s)) }}
}

// SinkSeries are the series of a sink as a whole, from sink.Stats.
var SinkSeries = []Series[sink.Stats]{
	{Name: "shards", Type: prometheus.GaugeValue,
		Help: "Shards (rings, each with its drain worker) of the sink.",
		Read: func(s sink.Stats) float64 { return float64(s.Shards) }},
	{Name: "overloads_total", Type: prometheus.CounterValue,
		Help: "Overload reports of the sink's monitor: checks, one per OverloadInterval at most, that found values dropped since the one before (events, not values).",
		Read: func(s sink.Stats) float64 { return float64(s.Overloads) }},
	{Name: "spill_bytes", Type: prometheus.GaugeValue,
		Help: "Bytes of the spill tier's files.",
		Read: func(s sink.Stats) float64 { return float64(s.SpillBytes) }},
	{Name: "spill_drained_total", Type: prometheus.CounterValue,
		Help: "Spilled values read back from disk and handed to Drain.",
		Read: func(s sink.Stats) float64 { return float64(s.SpillDrained) }},
	{Name: "recovered_total", Type: prometheus.CounterValue,
		Help: "Values an earlier sink on the spill directory left, handed to Drain by this one.",
		Read: func(s sink.Stats) float64 { return float64(s.Recovered) }},
	{Name: "spill_errors_total", Type: prometheus.CounterValue,
		Help: "Failed disk and Codec operations of the spill tier.",
		Read: func(s sink.Stats) float64 { return float64(s.SpillErrors) }},
	{Name: "spill_corrupt_total", Type: prometheus.CounterValue,
		Help: "Torn or corrupt spill segments, and undecodable records of an earlier sink, that were skipped.",
		Read: func(s sink.Stats) float64 { return float64(s.SpillCorrupt) }},
}

// Rings is the compiled ring and sink series of one sink.
type Rings struct {
	Whole  *Table[sink.Stats]
	shards *Table[ShardView]
	n      int  // the sink's shard count, fixed at New
	per    bool // one instance per shard
}

// NewRings compiles the ring and sink series of the sink named name, of
// n shards, per shard when per is set.
func NewRings(name string, n int, per bool) *Rings {
	r := &Rings{Whole: Compile(SinkSeries, name, 0), n: n, per: per}
	if per {
		r.shards = Compile(RingSeries, name, n)
	} else {
		r.shards = Compile(RingSeries, name, 0)
	}
	return r
}

// Describe sends the descriptors of the ring and sink series.
func (r *Rings) Describe(ch chan<- *prometheus.Desc) {
	r.Whole.Describe(ch)
	r.shards.Describe(ch)
}

// Size is the number of metrics emit appends.
func (r *Rings) Size() int { return r.Whole.Size() + r.shards.Size() }

// Emit appends the metrics of st, or returns an error when st does not
// have the shard count the collector was made for.
func (r *Rings) Emit(dst []Metric, st *sink.Stats) ([]Metric, error) {
	if len(st.PerShard) != r.n {
		return dst, fmt.Errorf("promsink: sink %q reports %d shards, the collector was made for %d", st.Name, len(st.PerShard), r.n)
	}
	dst = r.Whole.Emit(dst, 0, *st)
	if r.per {
		for i := range st.PerShard {
			dst = r.shards.Emit(dst, i, ShardView{st.PerShard[i], st.RingCapacity})
		}
		return dst, nil
	}
	return r.shards.Emit(dst, 0, totals(st)), nil
}

// totals is the sink as one shard: Stats' totals (each the sum of
// PerShard, by Stats' contract) and the capacity of all the rings. A new
// ShardStats field that RingSeries reads gets its total here.
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
