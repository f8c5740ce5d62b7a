package sink

import (
	"math/bits"
	"unsafe"
)

// stackShift drops the low 13 bits of a stack address, so that a
// goroutine's pushes from nearby call depths (within one 8 KiB block) share
// a home. Goroutine stacks start at 2 KiB, so up to four fresh goroutines
// whose stacks sit in one 8 KiB block share a home too; a goroutine whose
// stack has grown to 8 KiB or more has blocks of its own. A smaller shift
// would spread fresh goroutines more and tie a home more tightly to the
// call depth; it has not been measured.
const stackShift = 13

// stackHome returns the shard of the calling goroutine, derived from the
// address of a variable on its stack: a goroutine's stack is its own and
// does not move except when it grows (then the goroutine may move to
// another shard, once). It costs a few instructions and writes nothing.
// Stack blocks of different goroutines are, as a rule, different; Fibonacci
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
