// Package mpmc is an async multi-producer multi-consumer channel in which
// each value goes to exactly one receiver: a Go rendering of zruntime's mpmc
// module, itself modelled on smol-rs/async-channel.
//
// [Bounded] and [Unbounded] create a channel and return its first [Sender]
// and [Receiver]. Both ends can be cloned, and both are safe for concurrent
// use: several goroutines may share one Sender or one Receiver, or each hold
// a clone.
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
// # The model
//
// A sender moves each value into the channel and a receiver moves it out.
// Values leave in the order their sends took effect, so each sender's
// values arrive in the order it sent them, and each value goes to exactly
// one receiver. A bounded channel holds at most its capacity: [Sender.Send]
// waits while it is full and [Sender.TrySend] fails with [ErrFull]. An
// unbounded channel holds any number of values, and sending to it never
// waits. [Receiver.Recv] waits while the channel is empty and
// [Receiver.TryRecv] fails with [ErrEmpty].
//
// The ends are counted. [Sender.Clone] and [Receiver.Clone] make another
// counted end, and Release says that an end is done with: Release is the
// Go rendering of dropping a Rust end. The channel closes
//
//   - when [Sender.Close] or [Receiver.Close] is called,
//   - when the last Sender is released, and
//   - when the last Receiver is released, which also drops at once the
//     values left in the channel: nothing could receive them any more, so
//     their slots are cleared and the garbage collector can free what they
//     referenced.
//
// Sending to a closed channel fails with [ErrClosed] and the value stays
// with the caller. Receiving from a closed channel still returns the values
// left in it, and fails with ErrClosed only when none is left; from then on
// it always does. Closing is one atomic step with respect to every send: a
// send either took effect before the close (and its value is received like
// any other) or fails, and no send that starts after Close has returned
// succeeds. [Sender.Closed] and [Receiver.Closed] return a Go channel that is
// closed when the channel closes, to wait on in a select.
//
// Unlike a Go channel, which its one owner closes (and where a send after
// close panics), an mpmc channel needs no coordination between its
// senders: each goroutine releases its own clone, and the channel closes
// when the last one does.
//
// Close and Release are not two names for one thing. Close closes the
// channel for every end at once; Release says that one end is done. The
// Go habit of defer x.Close() is wrong here: a goroutine that defers
// tx.Close() closes the channel for every other sender (their sends fail
// with ErrClosed) and receiver when it returns. Defer Release instead, as
// in the example above, and call Close only to stop the whole channel.
// An end that is never released keeps its channel open for ever; run a
// program with MPMCDEBUG=leaks in its environment to have every Sender and
// Receiver that the garbage collector frees without a Release reported on
// standard error.
//
// Weak ends ([Sender.Downgrade], [Receiver.Downgrade]) refer to a channel
// without being counted, so they do not keep it open. Upgrade turns one
// back into a counted end while the channel is open, and fails once it is
// closed.
//
// Calling a method of a released end, or releasing an end twice, is a
// programming error and panics with a message that starts with "mpmc: ".
//
// # Waiting, and giving up a wait
//
// Send, Recv, [Receiver.RecvMany] and [Receiver.All] take a
// [context.Context] and wait until they can complete, the channel closes, or
// the context ends. Each tries first, so a call that can complete at once
// costs what TrySend or TryRecv costs (no allocation, no select, and no
// lock unless goroutines wait on the other side, one of which it then
// wakes: one locked instruction on amd64, the ring's compare-and-swap), and may
// succeed even when its context has already ended. All checks its context
// before every step, so a loop over a channel that never runs dry still
// ends when the context does.
//
// No operation waits for a lock of its own, and the Try operations never
// sleep until the channel changes, but none is lock-free in the strict
// sense: as in the rings they are built on, an operation that needs a slot
// that another goroutine has claimed but not yet filled or emptied (or, in
// an unbounded channel, the next block that another goroutine is
// installing) spins, then yields with runtime.Gosched, until that goroutine
// has finished; a goroutine preempted in the middle of an operation delays
// the ones that need its slot until it runs again.
//
// Goroutines that wait are served in the order they started to wait, as
// by a Go channel: a send that finds receivers waiting and nothing
// buffered hands its value to the oldest one, which wakes with it; a
// receive that makes room pushes the oldest waiting sender's value for it,
// and that sender wakes with its send done. So a value never waits in the
// channel for a goroutine to be scheduled. A send that finds values
// buffered pushes its value behind them (a receiver gets each sender's
// values in order) and wakes one waiting receiver. That wake-up is
// notify-additional, as in async-channel: each such send wakes a receiver
// that has not been woken yet, so a woken receiver that has not run yet
// cannot absorb the wake-up meant for the next value; one that finds the
// value taken by another goroutine waits again.
//
// A call whose context ends first returns ctx.Err() and has sent or taken
// nothing: a Send's value stays with the caller, a Recv took no value. If it
// had already been woken, the wake-up passes to the next waiting goroutine,
// so no waiter is left asleep while a value (or room) is there for it.
// Stress tests race cancellations against wake-ups over many rounds to hold
// the package to that.
//
// Waiting costs a lock, a select on a per-waiter Go channel and the
// context's Done channel (a context that cannot end, such as
// context.Background, costs no select), and no allocation once the channel
// has seen as many waiters at once before. Waiters belong to their channel,
// so a channel created inside a testing/synctest bubble works there like a
// Go channel: a goroutine waiting on it is durably blocked.
//
// # Storage
//
// A channel from Bounded keeps its values in a ring/vyukov ring, whose
// tail word carries the closed mark ([vyukov.Ring.Close]), as
// concurrent-queue, the queue under async-channel, does. A channel from
// [BoundedOn] runs over any [ring.Ring] backend, for instance to compare
// backends. A ring that implements [ClosableRing] (as a vyukov ring does)
// closes itself; any other has no closed mark, so the channel counts the
// sends and receives in flight, two atomic read-modify-writes more per send
// and per receive (go test -run '^$' -bench 'TryPath|WaitPath' ./mpmc/). An
// unbounded channel keeps its values in a list of blocks of 127 slots
// (crossbeam's SegQueue, without locks but not lock-free, see above), and
// keeps up to 16 emptied blocks (64 KiB at most) for reuse, so it
// allocates nothing in steady state unless it keeps growing, and then one
// block per 127 values (or a block that a consumer was still busy in when
// the block's last value was taken, which several consumers can cause, is
// left to the garbage collector and replaced).
//
// # mpmc or a Go channel?
//
// Use a Go channel when one goroutine owns the sending side and can close it,
// or when you need select over several channels. Use a Go channel for a
// rendezvous (capacity 0), which mpmc does not offer. Where goroutines wait
// for each other, the two behave alike: a receive completes a parked
// sender's send, and a send hands its value to a parked receiver, so at a
// small capacity they wake goroutines equally often (the same count of
// wake-ups per run, by runtime/metrics' /sched/latencies:seconds, in the
// one-sender-one-receiver rows of bench/channels).
//
// Use mpmc when many goroutines send and none owns the channel (the last
// Release closes it, and a send to a closed channel is an error, not a
// panic); when you need an unbounded channel; when waits must honour a
// context and a cancelled wait must provably lose nothing; when you need
// [Sender.ForceSend] (keep the newest values), [Receiver.RecvMany] (batch
// receive), weak ends, or counts of the ends; and when the operation itself
// is hot: a send or receive that completes at once costs less than half of
// a Go channel's.
//
// The measured table, mpmc against Go channels row for row as the
// original's, and the command that reproduces it are in
// docs/benchmarks.md ("The channel against Go channels"):
//
//	go run ./bench/channels
//	bash bench/channels/compare.sh OLD_CHECKOUT .   # two revisions side by side
package mpmc
