package main

import (
	"slices"

	"github.com/shardedsink/shardedsink/bench/internal/report"
)

// Core-ns per push is the metric every row can be read by: the time of the
// cores that could have been pushing, per accepted push,
//
//	min(producers, GOMAXPROCS) x wall time of the measured rounds / accepted pushes,
//
// per trial, and its median. It needs no validity mark: a row whose
// producers take turns (a ring that yields after a lost race, a mutex that
// parks) leaves a core idle and pays for it here, where per-thread CPU,
// which leaves out the time a producer waits for its turn, reads as cheap as
// a row that pushes on every core at once. It is what the user's process
// pays: the cores' time, not the threads'.

// coreNs is one trial's core-ns per push from its throughput (accepted
// pushes per second of the rounds' wall time); 0 for no throughput.
func coreNs(producers, gomaxprocs int, throughput float64) float64 {
	if throughput <= 0 || gomaxprocs < 1 {
		return 0
	}
	return float64(min(producers, gomaxprocs)) * 1e9 / throughput
}

// setCoreNs fills r's core-ns per push from its trials' throughput.
func setCoreNs(r *Row, gomaxprocs int) {
	r.CoreNsTrials = r.CoreNsTrials[:0]
	for _, tp := range r.ThroughputTrials {
		r.CoreNsTrials = append(r.CoreNsTrials, coreNs(r.Producers, gomaxprocs, tp))
	}
	if len(r.CoreNsTrials) == 0 {
		r.CoreNsPerOp, r.CoreNsMin, r.CoreNsMax = 0, 0, 0
		return
	}
	r.CoreNsPerOp = report.Median(r.CoreNsTrials)
	r.CoreNsMin = slices.Min(r.CoreNsTrials)
	r.CoreNsMax = slices.Max(r.CoreNsTrials)
}

// fillCoreNs derives core-ns per push for the rows of a run recorded before
// the JSON carried it: the trials' throughput and the run's GOMAXPROCS are
// all it needs, so older runs render in the same tables.
func fillCoreNs(res *Result) {
	for i := range res.Rows {
		if len(res.Rows[i].CoreNsTrials) == 0 {
			setCoreNs(&res.Rows[i], res.Run.Machine.GOMAXPROCS)
		}
	}
}
