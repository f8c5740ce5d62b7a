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
//     their sends took effect: each sender's arrive in the order it sent them.
//   - A bounded channel holds at most its capacity: [Sender.Send] waits while
//     it is full and [Sender.TrySend] fails with [ErrFull]; sending to an
//     unbounded channel never waits. [Receiver.Recv] waits while the channel
//     is empty and [Receiver.TryRecv] fails with [ErrEmpty].
//   - Closing is one atomic step with respect to every send: a send took
//     effect before it, and is received like any other, or fails with
//     [ErrClosed]. Receivers still get the values left, then ErrClosed.
//   - A call whose context ends first returns ctx.Err() and has sent or taken
//     nothing; a wake-up it had received passes to the next waiter.
//   - Waiters are served in the order they started to wait, and a value never
//     waits in the channel for a goroutine to be scheduled: a send hands it to
//     a waiting receiver, a receive that makes room completes the oldest send.
//
// How the channel keeps them is in docs/design.md ("mpmc: mechanism").
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
// and Release says that one end is done. The channel closes at
// [Sender.Close] or [Receiver.Close], at the Release of the last Sender,
// and at that of the last Receiver, which also drops the values left.
// [Sender.Closed] and [Receiver.Closed] return a Go channel closed then.
//
// Close closes the channel for every end: defer Release, as above, not
// Close, which would stop every other sender and receiver when one
// goroutine returns. An end never released keeps its channel open for
// ever (MPMCDEBUG=leaks reports one on standard error). Weak ends
// ([Sender.Downgrade], [Receiver.Downgrade]) are not counted and do not
// keep the channel open. Using or releasing a released end panics with a
// message that starts with "mpmc: ".
//
// # Waiting
//
// Send, Recv, [Receiver.RecvMany] and [Receiver.All] take a
// [context.Context] and wait until they can complete, the channel closes,
// or the context ends. Each tries first, so one that can complete at once
// costs what TrySend or TryRecv costs, even with its context ended (All
// checks its context before every step). Waiting costs a lock and a
// select on a per-waiter Go channel and the context's Done (none for a
// context that cannot end), and allocates nothing once the channel has
// seen as many waiters at once. Inside a testing/synctest bubble a
// goroutine waiting on a channel created there is durably blocked. No
// operation waits for a lock of its own, but none is lock-free in the
// strict sense (docs/design.md, "Not lock-free in the strict sense").
//
// # Storage
//
// [Bounded] keeps its values in a ring/vyukov ring; [BoundedOn] over a
// ring that is not a [ClosableRing] adds a guard of two atomic
// read-modify-writes per send and per receive (go test -run '^$' -bench
// 'TryPath|WaitPath' ./mpmc/). [Unbounded] keeps its values in blocks of
// 127 slots and up to 16 emptied blocks (64 KiB) for reuse: it allocates
// nothing in steady state, and one block per 127 values while it grows.
//
// # mpmc or a Go channel?
//
// Use a Go channel when one goroutine owns the sending side and can close
// it, or for a rendezvous (capacity 0), which mpmc does not offer. A
// select over several channels takes an mpmc channel through
// [Receiver.Ready], a Go channel signalled when a value may be taken.
// Where goroutines wait for each other the two wake goroutines equally
// often at a small capacity (go run ./bench/channels). Use mpmc when many
// goroutines send and none owns the channel (the last Release closes it,
// and a send to a closed channel is an error, not a panic); for an
// unbounded channel; when waits must honour a context and a cancelled
// wait must lose nothing; for [Sender.ForceSend] (keep the newest
// values), [Receiver.RecvMany], weak ends or counts of the ends; and when
// the operation itself is hot. Two revisions side by side:
//
//	bash bench/channels/compare.sh OLD_CHECKOUT .
package mpmc
