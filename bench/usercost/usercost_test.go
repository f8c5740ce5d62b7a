package usercost_test

import (
	"context"
	"testing"

	"github.com/shardedsink/shardedsink/mpmc"
	"github.com/shardedsink/shardedsink/ring/vyukov"
	"github.com/shardedsink/shardedsink/sink"
)

// round is the number of pushes between two drains of the sink: they fit
// in its one ring, so that every push in the timed loop is accepted.
const round = 4096

// heldSink is a one-shard sink whose worker can be held in Drain, so that
// nobody pops while the timed loop pushes: the numbers are the push alone.
type heldSink struct {
	s       *sink.Sink[uint64]
	entered chan struct{}
	release chan struct{}
}

// primer is the value that makes the worker wait in Drain.
const primer = ^uint64(0)

func newHeldSink(b *testing.B) *heldSink {
	h := &heldSink{entered: make(chan struct{}), release: make(chan struct{})}
	s, err := sink.New(sink.Config[uint64]{Name: "usercost", Shards: 1, RingCapacity: 2 * round},
		sink.ActionFunc[uint64](func(_ context.Context, batch []uint64) {
			for _, v := range batch {
				if v == primer {
					h.entered <- struct{}{}
					<-h.release
				}
			}
		}))
	if err != nil {
		b.Fatal(err)
	}
	h.s = s
	b.Cleanup(func() {
		if err := s.Shutdown(context.Background()); err != nil {
			b.Error(err)
		}
	})
	return h
}

// hold parks the worker in Drain; let lets it go and waits for the drain.
func (h *heldSink) hold(b *testing.B) {
	if !h.s.Handle().Push(primer) {
		b.Fatal("the primer was dropped")
	}
	<-h.entered
}

func (h *heldSink) let(b *testing.B) {
	h.release <- struct{}{}
	if err := h.s.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// benchPush times push over rounds of accepted pushes, the worker held.
func benchPush(b *testing.B, h *heldSink, push func(uint64) bool) {
	b.ReportAllocs()
	b.StopTimer()
	for done := 0; done < b.N; {
		n := min(round, b.N-done)
		h.hold(b)
		b.StartTimer()
		for i := range n {
			if !push(uint64(i)) {
				b.Fatal("a push was dropped")
			}
		}
		b.StopTimer()
		h.let(b)
		done += n
	}
}

func BenchmarkHandlePush(b *testing.B) {
	h := newHeldSink(b)
	benchPush(b, h, h.s.Handle().Push)
}

func BenchmarkSinkPush(b *testing.B) {
	h := newHeldSink(b)
	benchPush(b, h, h.s.Push)
}

func BenchmarkVyukovTryPushTryPop(b *testing.B) {
	r := vyukov.New[uint64](1024)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if !r.TryPush(uint64(i)) {
			b.Fatal("full")
		}
		if _, ok := r.TryPop(); !ok {
			b.Fatal("empty")
		}
	}
}

func BenchmarkMpmcTrySendTryRecv(b *testing.B) {
	tx, rx := mpmc.Bounded[uint64](1024)
	defer tx.Release()
	defer rx.Release()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := tx.TrySend(uint64(i)); err != nil {
			b.Fatal(err)
		}
		if _, err := rx.TryRecv(); err != nil {
			b.Fatal(err)
		}
	}
}
