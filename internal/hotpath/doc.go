// Package hotpath holds no code, only the test that keeps the library's hot
// paths inline in its users' programs.
//
// Generic code is compiled in the package that instantiates it: a user's
// sink.Sink[Event] is compiled in the user's package. There, the methods of
// sync/atomic's types (atomic.Uint64.Load, CompareAndSwap, ...) are small
// wrappers that the compiler inlines only when that package itself imports
// sync/atomic; otherwise each becomes a CALL. Measured on a 2-core VM with
// go1.26.8 before the fix: one Handle.Push cost 9.4 ns in a program that
// imported only the sink, and 6.0 ns when the same program also imported
// sync/atomic. The function forms (atomic.LoadUint64, atomic.AddUint64,
// atomic.CompareAndSwapUint64, ...) are compiler intrinsics in every package,
// so the hot paths of ring/vyukov, sink and mpmc use them on plain fields.
//
// The test builds testdata/probe, a module that imports only the library
// (the way a user's program does), with -gcflags=-S, and fails, naming the
// function and the call, when a hot function calls into sync/atomic.
// atomic.StorePointer, SwapPointer and CompareAndSwapPointer are calls in
// every package (they carry the garbage collector's write barrier), so
// they are allowed.
//
// TestPushPathsAreUnchanged compares every instruction of Handle.Push and
// Sink.Push (numbers normalised) with testdata/push.golden, recorded from
// the push before the byte budget (sink's Config.MaxQueuedBytes) was added,
// and checks that none comes from sink/budget.go: a sink without a budget
// pays not one instruction for it, and a later change to the push path
// shows up as a diff to review (rerun with -update once it is meant).
package hotpath
