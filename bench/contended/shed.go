package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/shardedsink/shardedsink/bench/internal/report"
	"github.com/shardedsink/shardedsink/sink"
)

// The shed path: what a push costs when it is rejected. A sharded sink on
// the row's backend, shedCapacity slots per shard, has every drain worker
// blocked inside its first Drain call and every ring full; producers then
// push exactly as in an accept-path trial, and every push fails and bumps
// its shard's drop counter. cpu ns/op is per rejected push.

// shedCapacity is the per-shard ring capacity of the shed rows. The reject
// path of every backend reads a cursor or two and does not depend on it.
const shedCapacity = 1024

// shedWait bounds the wait for the drain workers to block.
const shedWait = 10 * time.Second

func shedSizing(producers int, o *options) sizing {
	return sizing{producers: producers, per: o.items, shards: o.shards}
}

// measureShed runs the trials of one shed row.
func measureShed(im *impl, sz sizing, trials int) (ShedRow, error) {
	cpu := make([]float64, 0, trials)
	var attempted, accepted int64
	for range trials {
		inst, err := newShedInstance(im, sz.shards)
		if err != nil {
			return ShedRow{}, fmt.Errorf("shed %s: %w", im.name, err)
		}
		t, err := runOn(inst, sz)
		if err != nil {
			return ShedRow{}, fmt.Errorf("shed %s: %w", im.name, err)
		}
		cpu = append(cpu, t.cpuNsPerOp)
		attempted += t.attempted
		accepted += t.accepted
	}
	return ShedRow{
		Impl:        im.name,
		Producers:   sz.producers,
		CPUNsPerOp:  report.Median(cpu),
		RejectedPct: dropPct(attempted, accepted),
	}, nil
}

// shedInstance is a sharded sink that is full and stays full.
type shedInstance struct {
	s       *sink.Sink[Event]
	release chan struct{}
}

// newShedInstance builds the sink and fills it: it fills every ring, waits
// until each shard's worker has taken a batch and blocked in Drain, and
// fills the rings again.
func newShedInstance(im *impl, shards int) (*shedInstance, error) {
	release := make(chan struct{})
	var entered atomic.Int64
	block := sink.ActionFunc[Event](func(ctx context.Context, _ []Event) {
		entered.Add(1)
		select {
		case <-release:
		case <-ctx.Done():
		}
	})
	s, err := sink.New[Event](sinkConfig(im.name, shards, shedCapacity, im.backend), block)
	if err != nil {
		return nil, err
	}
	si := &shedInstance{s: s, release: release}
	// Round-robin handles: shards consecutive ones cover every shard.
	handles := make([]*sink.Handle[Event], shards)
	for i := range handles {
		handles[i] = s.Handle()
	}
	fill := func() {
		for _, h := range handles {
			// A worker takes at most one batch before it blocks, so this
			// ends after at most shedCapacity + drainBatch pushes.
			for h.Push(Event{}) {
			}
		}
	}
	fill()
	deadline := time.Now().Add(shedWait)
	for entered.Load() < int64(shards) {
		if time.Now().After(deadline) {
			_ = stopInstance(si)
			return nil, fmt.Errorf("only %d of %d drain workers blocked within %v", entered.Load(), shards, shedWait)
		}
		time.Sleep(time.Millisecond)
	}
	fill()
	return si, nil
}

func (si *shedInstance) pusher() pushFunc { return si.s.Handle().Push }

func (si *shedInstance) stop(ctx context.Context) error {
	close(si.release)
	return si.s.Shutdown(ctx)
}
