package sink

import (
	"math/bits"
	"unsafe"
)

// stackShift drops the low bits of a stack address: goroutine stacks start
// at 8 KiB and are allocated in multiples of it, so addresses that differ
// only below this shift are, as a rule, on the same goroutine's stack.
const stackShift = 13

// stackHome returns the shard of the calling goroutine, derived from the
// address of a variable on its stack: a goroutine's stack is its own and
// does not move except when it grows (then the goroutine may move to
// another shard, once). It costs a few instructions and writes nothing.
// Different goroutines' stacks are different 8 KiB blocks; Fibonacci
// hashing (one multiply by 2^64 divided by the golden ratio) scatters the
// block numbers, which are mostly consecutive, and Lemire's multiply-shift
// maps the result to [0, n) from its high bits.
//
// The address is only hashed, never turned back into a pointer.
func stackHome(n int) int {
	var anchor byte
	block := uint64(uintptr(unsafe.Pointer(&anchor)) >> stackShift)
	hi, _ := bits.Mul64(block*0x9e3779b97f4a7c15, uint64(n))
	return int(hi)
}
