// Command probe is built by the hot-path test of internal/hotpath with
// -gcflags=-S. Like a user's program, it imports only the library (and
// context), so the generic hot paths are instantiated here, in a package
// that does not import sync/atomic. The test reads the assembly and fails
// when a listed hot function calls into sync/atomic instead of using the
// inline atomic instructions.
package main

import (
	"context"

	"github.com/shardedsink/shardedsink/mpmc"
	"github.com/shardedsink/shardedsink/ring/vyukov"
	"github.com/shardedsink/shardedsink/sink"
)

type event struct{ a, b, c, d uint64 }

func main() {
	ctx := context.Background()

	r := vyukov.New[event](8)
	r.TryPush(event{})
	r.ForcePush(event{})
	r.TryPop()
	_ = r.Len()
	r.Close()
	_ = r.IsClosed()

	s := sink.MustNew(sink.Config[event]{Name: "probe"},
		sink.ActionFunc[event](func(context.Context, []event) {}))
	s.Handle().Push(event{})
	s.HandleFor(1).Push(event{})
	s.Push(event{})
	// PushWait's push when there is room: the same inline atomics.
	_ = s.Handle().PushWait(ctx, event{})
	_ = s.PushWait(ctx, event{})
	_ = s.Shutdown(ctx)

	// With a byte budget: the same Handle.Push and Sink.Push, whose ring
	// is then the budget in front of the vyukov ring.
	b := sink.MustNew(sink.Config[event]{Name: "probe-bytes", SizeOf: func(e event) int { return int(e.a) },
		MaxQueuedBytes: 1 << 20, MaxBatchBytes: 1 << 16},
		sink.ActionFunc[event](func(context.Context, []event) {}))
	b.Handle().Push(event{a: 8})
	b.Push(event{a: 8})
	_ = b.Shutdown(ctx)

	for _, mk := range []func() (*mpmc.Sender[event], *mpmc.Receiver[event]){
		func() (*mpmc.Sender[event], *mpmc.Receiver[event]) { return mpmc.Bounded[event](4) },
		mpmc.Unbounded[event],
	} {
		tx, rx := mk()
		tx2, rx2 := tx.Clone(), rx.Clone()
		_ = tx.TrySend(event{})
		_ = tx.Send(ctx, event{})
		_, _, _ = tx.ForceSend(event{})
		_, _ = rx.TryRecv()
		_, _ = rx.Recv(ctx)
		var dst [4]event
		_, _ = rx.RecvMany(ctx, dst[:])
		_, _ = tx.Len(), rx.IsEmpty()
		tx2.Release()
		rx2.Release()
		tx.Close()
		for range rx.All(ctx) {
		}
		tx.Release()
		rx.Release()
	}
}
