package main

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/shardedsink/shardedsink/bench/internal/report"
	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/sink"
)

// The shed path: what a push costs when it is rejected. A sharded sink on
// the row's backend, shedCapacity slots per shard, has every drain worker
// blocked inside its first Drain call and every ring full; producers then
// push exactly as in an accept-path trial (rounds with no budget, only the
// deadline, since a rejected push takes no room), and every push fails and
// bumps its shard's drop counter. cpu ns/op is per rejected push.

// shedCapacity is the per-shard ring capacity of the shed rows. The reject
// path of every backend reads a cursor or two and does not depend on it.
const shedCapacity = 1024

// shedWait bounds the wait for the drain workers to block.
const shedWait = 10 * time.Second

// measureShed runs the trials of one shed row.
func measureShed[T any](im *impl[T], sz sizing, trials int) (ShedRow, error) {
	row := ShedRow{Impl: im.name, Producers: sz.producers, PayloadBytes: payloadBytes[T]()}
	var attempted, accepted int64
	var scheduler string
	for range trials {
		inst, err := newShedInstance(im.name, im.backend, sz.shards)
		if err != nil {
			return ShedRow{}, fmt.Errorf("shed %s: %w", im.name, err)
		}
		t, err := runOn[T](inst, sz, unlimited)
		if err != nil {
			return ShedRow{}, fmt.Errorf("shed %s: %w", im.name, err)
		}
		row.CPUNsTrials = append(row.CPUNsTrials, rejectedNsPerOp(t))
		row.ParallelismTrials = append(row.ParallelismTrials, t.parallelism)
		scheduler = t.scheduler
		attempted += t.attempted + t.warmAttempted
		accepted += t.accepted + t.warmAccepted
	}
	row.CPUNsPerOp = report.Median(row.CPUNsTrials)
	row.CPUNsMin, row.CPUNsMax = slices.Min(row.CPUNsTrials), slices.Max(row.CPUNsTrials)
	row.RejectedPct = dropPct(attempted, accepted)
	row.Parallelism = report.Median(row.ParallelismTrials)
	row.Scheduler = scheduler
	row.ParallelismFloor = validFloor(sz.producers, runtime.GOMAXPROCS(0))
	row.Valid = row.Parallelism >= row.ParallelismFloor
	return row, nil
}

// rejectedNsPerOp is the trial's per-thread CPU per timed push: in a shed
// trial every push is rejected (RejectedPct shows it), so the accept path's
// per-accepted-push figure does not apply.
func rejectedNsPerOp(t trialResult) float64 {
	if t.attempted == 0 {
		return 0
	}
	return t.threadCPUNs / float64(t.attempted)
}

// shedInstance is a sharded sink that is full and stays full.
type shedInstance[T any] struct {
	s       *sink.Sink[T]
	release chan struct{}
}

// newShedInstance builds the sink and fills it: it fills every ring, waits
// until each shard's worker has taken a batch and blocked in Drain, and
// fills the rings again.
func newShedInstance[T any](name string, backend ring.Factory[T], shards int) (*shedInstance[T], error) {
	release := make(chan struct{})
	var entered atomic.Int64
	block := sink.ActionFunc[T](func(ctx context.Context, _ []T) {
		entered.Add(1)
		select {
		case <-release:
		case <-ctx.Done():
		}
	})
	s, err := sink.New(sink.Config[T]{
		Name: name, Shards: shards, RingCapacity: shedCapacity, BatchSize: drainBatch,
		Ring: backend, OverloadInterval: time.Hour, OnOverload: func(sink.Overload) {},
		Logger: slog.New(slog.DiscardHandler), Idle: sink.IdlePoll, IdleSleep: idleSleep, DisableStealing: true,
		DisableHandOff: true, // the shed path itself: no push parks for the worker
	}, block)
	if err != nil {
		return nil, err
	}
	si := &shedInstance[T]{s: s, release: release}
	// Round-robin handles: shards consecutive ones cover every shard.
	handles := make([]*sink.Handle[T], shards)
	for i := range handles {
		handles[i] = s.Handle()
	}
	fill := func() {
		for _, h := range handles {
			// A worker takes at most one batch before it blocks, so this
			// ends after at most shedCapacity + drainBatch pushes.
			for h.Push(*new(T)) {
			}
		}
	}
	fill()
	deadline := time.Now().Add(shedWait)
	for entered.Load() < int64(shards) {
		if time.Now().After(deadline) {
			_ = stopInstance[T](si)
			return nil, fmt.Errorf("only %d of %d drain workers blocked within %v", entered.Load(), shards, shedWait)
		}
		time.Sleep(time.Millisecond)
	}
	fill()
	return si, nil
}

func (si *shedInstance[T]) pusher() func(T) bool { return si.s.Handle().Push }

func (si *shedInstance[T]) consumed() int64 { return 0 }

// empty has nothing to do: the rings stay full between rounds.
func (si *shedInstance[T]) empty(context.Context, int64) error { return nil }

func (si *shedInstance[T]) stop(ctx context.Context) error {
	close(si.release)
	return si.s.Shutdown(ctx)
}
