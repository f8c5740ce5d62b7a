package mpmc

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/layout"
)

// Every int64 or uint64 field used atomically must be 8-byte aligned on
// 32-bit platforms too (a misaligned 64-bit atomic panics there): its
// offset in its struct is a multiple of 8, and the struct's alignment is 8,
// so that every allocation of it is 8-byte aligned. Run GOARCH=386 go test
// ./mpmc/ to check where it matters.
func TestSixtyFourBitAtomicsAreEightByteAligned(t *testing.T) {
	var c channel[int]
	var q waitQueue[int]
	var sq segQueue[int]
	var g guardedRing[int]
	type field struct {
		name          string
		offset, align uintptr
	}
	for _, f := range []field{
		{"channel.senders", unsafe.Offsetof(c.senders), unsafe.Alignof(c)},
		{"channel.receivers", unsafe.Offsetof(c.receivers), unsafe.Alignof(c)},
		{"channel.recvq.waiting", unsafe.Offsetof(c.recvq) + unsafe.Offsetof(q.waiting), unsafe.Alignof(c)},
		{"channel.sendq.waiting", unsafe.Offsetof(c.sendq) + unsafe.Offsetof(q.waiting), unsafe.Alignof(c)},
		{"waitQueue[int].waiting", unsafe.Offsetof(q.waiting), unsafe.Alignof(q)},
		{"segQueue.headIndex", unsafe.Offsetof(sq.headIndex), unsafe.Alignof(sq)},
		{"segQueue.tailIndex", unsafe.Offsetof(sq.tailIndex), unsafe.Alignof(sq)},
		{"guardedRing.state", unsafe.Offsetof(g.state), unsafe.Alignof(g)},
		{"guardedRing.pops", unsafe.Offsetof(g.pops), unsafe.Alignof(g)},
		{"guardedRing.displacing", unsafe.Offsetof(g.displacing), unsafe.Alignof(g)},
	} {
		require.Zero(t, f.offset%8, "%s is at offset %d", f.name, f.offset)
		require.Equal(t, uintptr(8), f.align, "%s: its struct is %d-byte aligned", f.name, f.align)
	}
	// A struct's alignment is its largest field's, so a waitQueue[int] (8) in
	// channel is as aligned as a channel of another T.
	require.Equal(t, uintptr(8), unsafe.Alignof(channel[byte]{}))
	require.Equal(t, uintptr(8), unsafe.Alignof(segQueue[byte]{}))
}

// The padding that the comments promise on 64-bit platforms: the
// channel's read-mostly fields fill one 128-byte block, each wait queue
// has a block of its own, and the unbounded queue's head and tail sit on
// blocks of their own.
func TestHotFieldsSitOnBlocksOfTheirOwn(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the padding is laid out for 64-bit platforms")
	}
	var c channel[int]
	require.Equal(t, uintptr(layout.CacheLine), unsafe.Offsetof(c.recvq))
	require.Equal(t, uintptr(layout.CacheLine), unsafe.Sizeof(waitQueue[int]{}))
	require.Equal(t, uintptr(2*layout.CacheLine), unsafe.Offsetof(c.sendq))
	require.Equal(t, uintptr(3*layout.CacheLine), unsafe.Offsetof(c.senders))
	var sq segQueue[int]
	require.Zero(t, unsafe.Offsetof(sq.headIndex))
	require.Equal(t, uintptr(layout.CacheLine), unsafe.Offsetof(sq.tailIndex))
	require.Equal(t, uintptr(2*layout.CacheLine), unsafe.Offsetof(sq.spareMu))
}

// A wait queue fills one block exactly on every architecture: its padding
// is computed from its fields' sizes (GOARCH=386 go test ./mpmc/ checks
// the 32-bit case).
func TestAWaitQueueFillsOneBlock(t *testing.T) {
	require.Equal(t, uintptr(layout.CacheLine), unsafe.Sizeof(waitQueue[int]{}))
	require.Equal(t, uintptr(layout.CacheLine), unsafe.Sizeof(waitQueue[[64]byte]{}))
}
