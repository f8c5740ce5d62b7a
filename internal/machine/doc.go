// Package machine holds the two things the library needs from the processor
// that Go offers no intrinsic for: a release store, and the number of the
// CPU the calling thread runs on. Everything here is a few instructions of
// assembly on amd64 with a pure-Go path for every other platform; the hot
// paths of ring/vyukov, mpmc and sink call it. [CoreRoundTrip], for the
// benchmarks only, measures how far apart the VM has placed two of its
// cores.
//
// # Release stores
//
// [StoreRelease] stores v at addr with release ordering: every memory write
// that the calling goroutine made before the call is visible to a goroutine
// that loads the new value with atomic.LoadUint64 (or any later value of
// addr) and then reads those locations. It is the publish half of a
// release/acquire pair and nothing more: unlike atomic.StoreUint64, it does
// not order the store before the caller's later loads of other locations.
//
// Go's sync/atomic stores are sequentially consistent, and on amd64 that is
// a locked XCHG (8.1 ns against StoreRelease's 1.8 ns on a 2-core KVM Intel
// Xeon: go test -run '^$' -bench Store ./internal/machine/); the algorithms here (Vyukov's ring, as crossbeam's ArrayQueue
// renders it) need only release, which on amd64 is a plain MOV:
//
//   - the hardware: amd64 is TSO. A core's stores become visible in program
//     order, and a load is never reordered with an older load, so a plain
//     store published after plain writes, and read by an acquire load
//     (atomic.LoadUint64 is a plain MOV on amd64), carries those writes
//     with it. The one reordering TSO allows, a later load passing an
//     earlier store (the store buffer), is exactly what release does not
//     forbid.
//   - the compiler: StoreRelease is an assembly function, which the Go
//     compiler never inlines and treats as a call that may read and write
//     any memory, so it neither moves the caller's earlier writes past the
//     call nor caches memory across it.
//
// Code that relies on the store being ordered before a later load (Dekker's
// pattern: store my flag, then load yours) must not use StoreRelease for
// that store. In this library every such pair is formed by a locked
// read-modify-write (the ring's compare-and-swap on its tail or head) or by
// a sequentially consistent atomic, never by a stamp publish: each user
// says at the call which load pairs with the store and which edge it needs.
//
// Under the race detector (build tag race) and on every other architecture
// StoreRelease is atomic.StoreUint64: the race detector sees every
// synchronising edge, and arm64 keeps its STLR.
//
// # The CPU number
//
// [CPU] returns the number of the CPU the calling thread was running on a
// moment ago, when [CPUReadable] reports that it can read it cheaply:
// linux/amd64 on a processor with RDPID (detected with CPUID), which reads
// the number Linux keeps in the IA32_TSC_AUX register for the vDSO's getcpu
// (3.3 ns on a 2-core KVM Intel Xeon: go test -run '^$' -bench CPU
// ./internal/machine/). The package checks once, at start-up,
// that the register agrees with the getcpu system call, so that a
// hypervisor that hides or zeroes it is detected. Elsewhere CPUReadable is
// false and CPU returns 0.
//
// The number is a hint: the thread may move to another CPU right after the
// read. Callers use it to choose among equivalent resources (the sink's
// rings), never for correctness.
package machine
