package main

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"sync/atomic"
	"unsafe"

	diodes "code.cloudfoundry.org/go-diodes"
	"github.com/Workiva/go-datastructures/queue"
	"github.com/bytedance/gopkg/collection/lscq"
	"github.com/puzpuzpuz/xsync/v4"
)

// The peers: queues a Go user might pick instead of a sink, each pushed
// through its own non-blocking call, sized like the single-ring baselines,
// pre-touched to their full (rounded-up) capacity, and drained (when
// draining) by one consumer under the common policy (see drainer).

// xsyncImpl is xsync v4's MPMCQueue (rigtorp/Vyukov) and its TryEnqueue.
func xsyncImpl[T any]() *impl[T] {
	return &impl[T]{
		name:     "xsync",
		spurious: true,
		caveat: "xsync v4 `MPMCQueue.TryEnqueue`: one CAS attempt, and it gives up when it loses the race, " +
			"so a queue that never fills still rejects pushes under contention; those show up as drops, and every " +
			"column divides by accepted pushes. Capacity rounds up to a power of two; the whole rounded-up queue is pre-touched",
		setup: func(sz sizing, mode consumerMode) (rowSetup[T], error) {
			q := xsync.NewMPMCQueue[T](ringCapacity(sz.round))
			// Fault in every slot, the rounded-up ones included: fill until
			// full (nobody else pushes, so a refusal means full), then empty.
			n := 0
			for q.TryEnqueue(*new(T)) {
				n++
			}
			for range n {
				if _, ok := q.TryDequeue(); !ok {
					return nil, fmt.Errorf("xsync: emptying the pre-touched queue failed")
				}
			}
			return &queueRow[T]{
				mode: mode,
				push: q.TryEnqueue,
				pop:  func() bool { _, ok := q.TryDequeue(); return ok },
			}, nil
		},
	}
}

// workivaImpl is Workiva go-datastructures' RingBuffer and its Offer.
func workivaImpl[T any]() *impl[T] {
	return &impl[T]{
		name:     "workiva",
		spurious: true,
		caveat: "Workiva go-datastructures `queue.RingBuffer.Offer`: items are `interface{}`, so every push boxes " +
			"the payload (an allocation, and GC work in process CPU); size rounds up to a power " +
			"of two (all of it pre-touched); like xsync, Offer returns false after one lost CAS, so contention shows up as drops",
		setup: func(sz sizing, mode consumerMode) (rowSetup[T], error) {
			rb := queue.NewRingBuffer(uint64(ringCapacity(sz.round)))
			for {
				ok, err := rb.Offer(*new(T))
				if err != nil || !ok {
					break
				}
			}
			for rb.Len() > 0 {
				if _, err := rb.Get(); err != nil {
					return nil, err
				}
			}
			return &queueRow[T]{
				mode: mode,
				push: func(v T) bool {
					ok, err := rb.Offer(v)
					return ok && err == nil
				},
				// RingBuffer has no try-pop. With one consumer, Len > 0
				// means a producer has claimed a slot, and Get waits only
				// until that producer publishes it.
				pop: func() bool {
					if rb.Len() == 0 {
						return false
					}
					_, err := rb.Get()
					return err == nil
				},
			}, nil
		},
	}
}

// diodeState counts what the diode rows report besides the table.
type diodeState struct {
	collisions  atomic.Int64 // "Diode set collision" log lines: Set retries
	overwritten atomic.Int64 // values the reader found overwritten (Alert)
}

// diodesImpl is go-diodes' ManyToOne and its Set.
func diodesImpl[T any]() *impl[T] {
	st := &diodeState{}
	return &impl[T]{
		name: "diodes",
		caveat: "go-diodes `ManyToOne.Set`: never fails; when full it overwrites the oldest value instead of " +
			"shedding the new one, and only the reader learns of it (Alert), so drop % is 0 by construction " +
			"(the ring holds a whole round, so nothing should be overwritten). Data is `unsafe.Pointer`: " +
			"each push copies the payload to the heap and Set allocates a bucket, two allocations per push",
		notes: func() []string {
			return []string{fmt.Sprintf("diodes in this run: %d Set collisions (retries, each logged by go-diodes), %d values overwritten",
				st.collisions.Load(), st.overwritten.Load())}
		},
		setup: func(sz sizing, mode consumerMode) (rowSetup[T], error) {
			n := ringCapacity(sz.round)
			d := diodes.NewManyToOne(n, diodes.AlertFunc(func(missed int) {
				st.overwritten.Add(int64(missed))
			}))
			for range n {
				d.Set(diodes.GenericDataType(unsafe.Pointer(new(T))))
			}
			for {
				if _, ok := d.TryNext(); !ok {
					break
				}
			}
			// go-diodes logs every Set collision through the standard
			// logger; count the lines instead of printing them.
			var prev io.Writer
			return &queueRow[T]{
				mode: mode,
				onStart: func() {
					prev = log.Writer()
					log.SetOutput(lineCounter{&st.collisions})
				},
				push: func(v T) bool {
					p := new(T)
					*p = v
					d.Set(diodes.GenericDataType(unsafe.Pointer(p)))
					return true
				},
				pop:    func() bool { _, ok := d.TryNext(); return ok },
				onStop: func() { log.SetOutput(prev) },
			}, nil
		},
	}
}

// lineCounter is an io.Writer that counts lines. The log package serialises
// its writes.
type lineCounter struct{ n *atomic.Int64 }

func (c lineCounter) Write(p []byte) (int, error) {
	c.n.Add(int64(bytes.Count(p, []byte{'\n'})))
	return len(p), nil
}

// lscqImpl is bytedance/gopkg's LSCQ, an unbounded fetch-and-add queue.
func lscqImpl[T any]() *impl[T] {
	return &impl[T]{
		name: "lscq",
		caveat: "bytedance/gopkg `lscq.NewUint64().Enqueue`: unbounded (a linked list of 65,536-entry SCQ rings), " +
			"so it is never full and has no shed path; it carries a uint64, so with the 32-byte payload the row pushes " +
			"the payload's 8-byte id",
		setup: func(sz sizing, mode consumerMode) (rowSetup[T], error) {
			q := lscq.NewUint64()
			return &queueRow[T]{
				mode: mode,
				push: func(v T) bool { return q.Enqueue(idOf(&v)) },
				pop:  func() bool { _, ok := q.Dequeue(); return ok },
			}, nil
		},
	}
}
