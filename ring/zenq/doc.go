//go:build zenq

// Package zenq adapts github.com/alphadose/zenq/v2 (v2.8.4) to [ring.Ring] so
// that the benchmarks can compare it with the other backends. It is
// benchmark-only code: it reaches into the Go runtime and into zenq's
// internals, it is built only with the zenq build tag, and none of the core
// packages (ring, ring/vyukov, ring/mutex, ring/chanring, sink, mpmc) imports
// it or ever may. Build and test it with
//
//	go test -tags zenq -ldflags=-checklinkname=0 ./ring/zenq/
//
// # Why the flags, and the link names
//
// zenq reaches the scheduler through //go:linkname references to runtime
// internals (dropg, casgstatus, schedule, mcall, gosched_m, ...). Since Go
// 1.23 the linker rejects such references unless the runtime marks the
// symbol as linkable, so zenq fails to link with "invalid reference to
// runtime.dropg"; -ldflags=-checklinkname=0 turns that check off. zenq also
// names the byte atomics runtime/internal/atomic.Load8, Store8, And8 and Or8,
// and Go 1.23 moved that package to internal/runtime/atomic, so those symbols
// no longer exist under that name and no flag brings them back. This package
// defines them itself, under exactly those link names, in byteatomic.go:
// each byte operation is an atomic operation on the aligned 32-bit word that
// holds the byte. (Upstream issue: alphadose/ZenQ#18, open.)
//
// # Try operations on a blocking queue
//
// zenq has no try operations. Its Write takes a ticket with an atomic add
// that cannot be undone and parks the writer when its slot is still full; its
// Read takes a ticket the same way and busy-yields while its slot is empty.
// A try operation built directly on them would leak a ticket on every
// failure. zenq also rounds its size up to a power of two and caps it at 2^16
// slots. The adapter therefore puts its own admission control in front:
//
//   - One 64-bit counter word holds two counts: used, the values in the ring
//     plus the pushes and pops in progress, and ready, the values pushed or
//     being pushed that no pop has claimed yet. TryPush raises both with one
//     compare-and-swap, and only while used < capacity; then it calls Write.
//     TryPop claims a value by lowering ready, calls Read, zeroes the slot
//     Read left behind, and lowers used.
//   - Pops are serialised by a mutex. zenq's Read takes its ticket and then
//     claims its slot in two steps, and a reader stopped between them while
//     later readers finish lets a writer a full lap ahead find that slot
//     still occupied and park, with nobody left to wake it. That is not
//     hypothetical: without the mutex, rounds of 4 writers and 4 readers
//     moving 80,000 values through a ring of capacity 4 stalled for good,
//     a writer parked in Write, in 3 of 7 runs of up to 300 rounds
//     (GOMAXPROCS 1 to 8 on 2 cores; the stalls came after 14 to 107). With
//     one reader at a time, reads finish in ticket order, and the argument
//     on [Ring] shows that Write never parks and that Read waits only for a
//     push that is already under way.
//   - Pushes are serialised by a second mutex, held from the reservation to
//     the end of Write. Otherwise a push could reserve before another and
//     take its writer ticket after it: zenq's order would then differ from
//     the order the counters (and so Len, the full check and the pops'
//     claims) describe. The conformance kit's linearizability check found
//     such a history in CI (Len 1 once one push had started, then a later
//     push's value popped first).
//
// The ring is then exact (Cap is the capacity asked for, which may be any
// value from 1 to 65,536; zenq's ring is the next power of two), FIFO, and
// free of spurious failures: TryPush reports full only when capacity values
// are in the ring and no pop is under way, and TryPop reports empty only when
// every push has been claimed. Like the Vyukov ring, an operation may wait
// (yielding) for another goroutine that is in the middle of its own
// operation. Popped slots are zeroed through zenq's slot array, whose layout
// is read with reflect and checked when the ring is built.
//
// # What it costs
//
// Benchmark numbers measure zenq plus this adapter, not zenq alone. On top of
// zenq's own work a TryPush performs a mutex lock and unlock and one
// compare-and-swap on the counter word; a TryPop performs a load of it (an empty ring stops there), a mutex
// lock and unlock, and two atomic adds on it, then one store to zero the
// slot. The counter word is shared by producers and consumers, where zenq
// keeps its reader and writer indexes on separate cache lines; producers
// never run Write in parallel, and consumers never run Read in parallel. So
// under contention the zenq rows measure zenq behind two locks. zenq is built for blocking transfer, mostly to
// one reader; as a non-blocking multi-consumer ring it pays for the
// guarantees the ring contract demands.
//
// # The goroutine that zenq leaves behind
//
// zenq.New starts a selectSender goroutine for every queue, which serves
// zenq.Select. It parks itself at once and runs only when a Select signals
// it; its loop has no exit, and zenq's Close only closes the queue for
// writes. Nothing outside zenq can stop it, so every ring leaks one parked
// goroutine, which keeps zenq's slot array reachable for the life of the
// process: for int values about 64 bytes per zenq slot (the slot, its
// parker and a parking spot) and a 2 KiB stack, so 4 MiB for a ring of
// 65,536 (measured with runtime.MemStats over 50 rings). [Ring.Close]
// empties the ring so that the leaked array holds no values of the caller's;
// it cannot return the goroutine or the array. Tests that use goleak must
// ignore the goroutine, whose top function is
// github.com/alphadose/zenq/v2.(*ZenQ[...]).selectSender. Create few rings,
// as a benchmark does, rather than one per operation; a long fuzzing run
// grows by one goroutine per input.
//
// # The race detector
//
// zenq cannot run with race instrumentation: it parks goroutines with
// mcall(fast_park), which runs its own function fast_park on the scheduler's
// g0 stack, and the race detector's entry hook in that function dereferences
// g0's nil race context (SIGSEGV in __tsan_func_enter on the first New).
// Race-test the adapter with zenq itself left uninstrumented:
//
//	go test -race -gcflags=github.com/alphadose/zenq/v2=-race=false \
//		-tags zenq -ldflags=-checklinkname=0 ./ring/zenq/
//
// The adapter, the tests and sync/atomic stay instrumented; zenq's own plain
// memory accesses are invisible to the detector. Under a plain -race the
// tests that create zenq queues detect the crash in a child process and skip
// with that advice, and the byte-atomic tests still run. Any other race
// build that creates a zenq ring (bench, ring benchmarks with -tags zenq)
// needs the same -gcflags.
package zenq
