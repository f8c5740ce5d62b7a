//go:build zenq

package zenq

import (
	"sync/atomic"
	"unsafe"
)

// zenq v2.8.4 declares these four functions without bodies and links them to
// runtime/internal/atomic, which Go 1.23 renamed internal/runtime/atomic; the
// symbols are gone, and without them zenq does not link. The directives
// below define them here under the old names. zenq uses Load8 and Store8 on
// its globalState byte (open, closed for writes, fully closed); And8 and Or8
// are declared but unused, and are supplied so that every name zenq declares
// resolves.
//
// sync/atomic has no byte operations, so each one works on the aligned
// 32-bit word that contains the byte. That word never crosses an allocation
// boundary (Go allocates in multiples of 8 bytes, aligned), and the other
// three bytes are written back unchanged: Store8 by a compare-and-swap loop
// that retries if any byte of the word changed in between, And8 and Or8 by
// single AND and OR operations whose mask leaves the other bytes alone. The
// operations are sequentially consistent, as strong as the runtime's.

//go:linkname load8 runtime/internal/atomic.Load8
func load8(ptr *uint8) uint8 {
	w, shift := wordOf(ptr)
	return uint8(atomic.LoadUint32(w) >> shift)
}

//go:linkname store8 runtime/internal/atomic.Store8
func store8(ptr *uint8, val uint8) {
	w, shift := wordOf(ptr)
	for {
		old := atomic.LoadUint32(w)
		if atomic.CompareAndSwapUint32(w, old, old&^(0xff<<shift)|uint32(val)<<shift) {
			return
		}
	}
}

//go:linkname and8 runtime/internal/atomic.And8
func and8(ptr *uint8, val uint8) {
	w, shift := wordOf(ptr)
	atomic.AndUint32(w, uint32(val)<<shift|^(uint32(0xff)<<shift))
}

//go:linkname or8 runtime/internal/atomic.Or8
func or8(ptr *uint8, val uint8) {
	w, shift := wordOf(ptr)
	atomic.OrUint32(w, uint32(val)<<shift)
}

// wordOf returns the aligned 32-bit word that holds *ptr and the shift that
// moves *ptr to the low byte of that word's value: 8 times the byte's index
// in the word on little-endian machines, counted from the other end on
// big-endian ones (see byteorder_*.go).
func wordOf(ptr *uint8) (*uint32, uint32) {
	offset := uintptr(unsafe.Pointer(ptr)) & 3
	w := (*uint32)(unsafe.Add(unsafe.Pointer(ptr), -int(offset)))
	if bigEndian {
		return w, uint32(3-offset) * 8
	}
	return w, uint32(offset) * 8
}
