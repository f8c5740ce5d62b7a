package main

import (
	"bytes"
	"fmt"
	"log"
	"sync/atomic"
	"unsafe"

	diodes "code.cloudfoundry.org/go-diodes"
	"github.com/Workiva/go-datastructures/queue"
	"github.com/bytedance/gopkg/collection/lscq"
	"github.com/puzpuzpuz/xsync/v4"
)

// The peers: queues a Go user might pick instead of a sink, each pushed
// through its own non-blocking call and drained by one consumer goroutine
// (see drainer), sized like the single-ring baselines.

// xsyncImpl is xsync v4's MPMCQueue (rigtorp/Vyukov) and its TryEnqueue.
func xsyncImpl() *impl {
	return &impl{
		name:     "xsync",
		spurious: true,
		caveat: "xsync v4 `MPMCQueue.TryEnqueue`: one CAS attempt, and it gives up when it loses the race, " +
			"so a queue that never fills still rejects pushes under contention; those show up as drops. " +
			"Capacity rounds up to a power of two",
		build: func(sz sizing) (instance, error) {
			n := singleCapacity(sz.producers, sz.per)
			q := xsync.NewMPMCQueue[Event](n)
			for range n { // fault in the slots before timing
				q.TryEnqueue(Event{})
			}
			for range n {
				q.TryDequeue()
			}
			return &queueInstance{
				push:    q.TryEnqueue,
				drainer: startDrainer(func() bool { _, ok := q.TryDequeue(); return ok }),
			}, nil
		},
	}
}

// workivaImpl is Workiva go-datastructures' RingBuffer and its Offer.
func workivaImpl() *impl {
	return &impl{
		name:     "workiva",
		spurious: true,
		caveat: "Workiva go-datastructures `queue.RingBuffer.Offer`: items are `interface{}`, so every push boxes " +
			"the 32-byte event (one allocation, and GC work charged to the producer); size rounds up to a power " +
			"of two; like xsync, Offer returns false after one lost CAS, so contention can show up as drops",
		build: func(sz sizing) (instance, error) {
			rb := queue.NewRingBuffer(uint64(singleCapacity(sz.producers, sz.per))) // NewRingBuffer touches every node
			return &queueInstance{
				push: func(ev Event) bool {
					ok, err := rb.Offer(ev)
					return ok && err == nil
				},
				// RingBuffer has no try-pop. With one consumer, Len > 0
				// means a producer has claimed a slot, and Get waits only
				// until that producer publishes it.
				drainer: startDrainer(func() bool {
					if rb.Len() == 0 {
						return false
					}
					_, err := rb.Get()
					return err == nil
				}),
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
func diodesImpl() *impl {
	st := &diodeState{}
	return &impl{
		name: "diodes",
		caveat: "go-diodes `ManyToOne.Set`: never fails; when full it overwrites the oldest value instead of " +
			"shedding the new one, and only the reader learns of it (Alert), so drop % is 0 by construction " +
			"(the ring is sized for the burst, so nothing should be overwritten). Data is `unsafe.Pointer`: " +
			"each push copies the event to the heap and Set allocates a bucket, two allocations per push",
		notes: func() []string {
			return []string{fmt.Sprintf("diodes in this run: %d Set collisions (retries, each logged by go-diodes), %d values overwritten",
				st.collisions.Load(), st.overwritten.Load())}
		},
		build: func(sz sizing) (instance, error) {
			d := diodes.NewManyToOne(singleCapacity(sz.producers, sz.per), diodes.AlertFunc(func(missed int) {
				st.overwritten.Add(int64(missed))
			}))
			// go-diodes logs every Set collision through the standard
			// logger; count the lines instead of printing them.
			prev := log.Writer()
			log.SetOutput(lineCounter{&st.collisions})
			return &queueInstance{
				push: func(ev Event) bool {
					p := new(Event)
					*p = ev
					d.Set(diodes.GenericDataType(unsafe.Pointer(p)))
					return true
				},
				drainer: startDrainer(func() bool { _, ok := d.TryNext(); return ok }),
				onStop:  func() { log.SetOutput(prev) },
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
func lscqImpl() *impl {
	return &impl{
		name: "lscq",
		caveat: "bytedance/gopkg `lscq.NewUint64().Enqueue`: unbounded (a linked list of 65,536-entry SCQ rings), " +
			"so it is never full and has no shed path; it carries a uint64, so the row pushes the event's " +
			"8-byte id rather than the 32-byte record",
		build: func(sz sizing) (instance, error) {
			q := lscq.NewUint64()
			return &queueInstance{
				push:    func(ev Event) bool { return q.Enqueue(ev.Timestamp) },
				drainer: startDrainer(func() bool { _, ok := q.Dequeue(); return ok }),
			}, nil
		},
	}
}

// Compile-time check that the queue instances keep the instance shape.
var _ = []instance{(*queueInstance)(nil), (*chanInstance)(nil)}
