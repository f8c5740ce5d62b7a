// Package mpmc is an async multi-producer multi-consumer channel in which
// each value goes to exactly one receiver: a Go rendering of zruntime's mpmc
// module, itself modelled on smol-rs/async-channel. [Bounded] and
// [Unbounded] create a channel and return its first [Sender] and
// [Receiver]; [BoundedOn] runs one over a ring of any backend. Both ends can
// be cloned, and both are safe for concurrent use.
//
//	tx, rx := mpmc.Bounded[Job](64)
//	go func() {
//		defer tx.Release() // the last sender's Release closes the channel
//		for _, j := range jobs {
//			if err := tx.Send(ctx, j); err != nil {
//				return // ErrClosed, or ctx.Err()
//			}
//		}
//	}()
//	for j := range rx.All(ctx) { // ends when the channel is closed and empty
//		handle(j)
//	}
//
// # Guarantees
//
//   - Each value goes to exactly one receiver, and values leave in the order
//     their sends took effect, so each sender's values arrive in the order
//     it sent them.
//   - A bounded channel holds at most its capacity: [Sender.Send] waits while
//     it is full and [Sender.TrySend] fails with [ErrFull]. An unbounded
//     channel holds any number of values, and sending to it never waits.
//     [Receiver.Recv] waits while the channel is empty and [Receiver.TryRecv]
//     fails with [ErrEmpty].
//   - Closing is one atomic step with respect to every send: a send either
//     took effect before the close (and its value is received like any
//     other) or fails with [ErrClosed], the value staying with the caller.
//     Receivers still get the values left, and ErrClosed once none is.
//   - A call whose context ends first returns ctx.Err() and has sent or taken
//     nothing. A wake-up it had received passes to the next waiter, so no
//     waiter is left asleep while a value (or room) is there for it.
//   - Waiters are served in the order they started to wait, as by a Go
//     channel, and a value never waits in the channel for a goroutine to be
//     scheduled: a send hands it to a waiting receiver directly, and a
//     receive that makes room completes the oldest waiting send.
//
// A send or receive that completes at once costs one locked instruction on
// amd64 (the ring's compare-and-swap), no allocation, and no lock unless
// goroutines wait on the other side: 0.52x to 0.64x a Go channel's from
// one goroutine, 0.48x to 0.85x with 4 senders and 4 receivers, and at
// most 0.99x in any case of the table (bench/channels/RESULTS.md;
// go run ./bench/channels).
//
// # Ends, Close and Release
//
// The ends are counted: [Sender.Clone] and [Receiver.Clone] make another,
// and Release says that one end is done. The channel closes when
// [Sender.Close] or [Receiver.Close] is called, when the last Sender is
// released, and when the last Receiver is released, which also drops the
// values left, clearing their slots for the garbage collector. No send that
// starts after Close has returned succeeds. [Sender.Closed] and
// [Receiver.Closed] return a Go channel that is closed then, for a select.
//
// Close and Release are not two names for one thing: Close closes the
// channel for every end at once. The Go habit of defer x.Close() is wrong
// here: a goroutine that defers tx.Close() closes the channel for every
// other sender and receiver when it returns. Defer Release, as above, and
// call Close only to stop the whole channel. An end that is never released
// keeps its channel open for ever; with MPMCDEBUG=leaks in the environment,
// every end that the garbage collector frees without a Release is reported
// on standard error. Weak ends ([Sender.Downgrade], [Receiver.Downgrade])
// are not counted and do not keep the channel open; Upgrade fails once it
// is closed. Calling a method of a released end, or releasing an end twice,
// panics with a message that starts with "mpmc: ".
//
// # Waiting
//
// Send, Recv, [Receiver.RecvMany] and [Receiver.All] take a
// [context.Context] and wait until they can complete, the channel closes, or
// the context ends. Each tries first, so a call that can complete at once
// costs what TrySend or TryRecv costs, and may succeed even when its context
// has already ended; All checks its context before every step. Waiting
// costs a lock and a select on a per-waiter Go channel and the context's
// Done (none for a context that cannot end), and allocates nothing once the
// channel has seen as many waiters at once. Inside a testing/synctest bubble
// a goroutine waiting on a channel created there is durably blocked.
//
// No operation waits for a lock of its own, but none is lock-free in the
// strict sense: an operation that needs a slot another goroutine has claimed
// but not yet filled or emptied (or, unbounded, a block it is installing)
// spins, then yields, until that goroutine has finished, so a goroutine
// preempted mid-operation delays those that need its slot. How waiters are
// woken is in docs/design.md ("mpmc: mechanism").
//
// # Storage
//
// [Bounded] keeps its values in a ring/vyukov ring, whose tail word carries
// the closed mark. [BoundedOn] runs over any [ring.Ring]: a [ClosableRing]
// closes itself, any other gets a guard that costs two atomic
// read-modify-writes more per send and per receive (go test -run '^$'
// -bench 'TryPath|WaitPath' ./mpmc/). [Unbounded] keeps its values in blocks
// of 127 slots and keeps up to 16 emptied blocks (64 KiB at most) for reuse,
// so it allocates nothing in steady state unless it keeps growing, and then
// one block per 127 values (with several receivers, now and then a block
// that one was still reading is left to the garbage collector and replaced).
//
// # mpmc or a Go channel?
//
// Use a Go channel when one goroutine owns the sending side and can close
// it, or for a rendezvous (capacity 0), which mpmc does not offer. A select
// over several channels takes an mpmc channel through [Receiver.Ready]: a
// Go channel that is signalled when a value may be taken, for
// [Receiver.TryRecv] (see its doc for what the signal promises). Where goroutines wait for each
// other the two behave alike, waking goroutines equally often at a small
// capacity (runtime/metrics' /sched/latencies:seconds, in the
// one-sender-one-receiver rows of go run ./bench/channels). Use mpmc when
// many goroutines send and none owns the channel (the last Release closes
// it, and a send to a closed channel is an error, not a panic); when you
// need an unbounded channel; when waits must honour a context and a
// cancelled wait must provably lose nothing; when you need
// [Sender.ForceSend] (keep the newest values), [Receiver.RecvMany], weak
// ends or counts of the ends; and when the operation itself is hot. The
// table, and two revisions side by side:
//
//	go run ./bench/channels
//	bash bench/channels/compare.sh OLD_CHECKOUT .
package mpmc
