package logsink

import (
	"math/bits"
	"sync/atomic"

	"github.com/shardedsink/shardedsink/internal/layout"
	"github.com/shardedsink/shardedsink/internal/machine"
)

// callCount counts the logging calls and Flushes between their closed
// check and their push (Stream.Begin has the pairing with Close). Every
// call adds one when it begins and takes one away when it ends, so a
// single counter is a cache line that every core writes twice per record:
// with the VM's two cores far apart (a core-to-core round trip of 300 to
// 650 ns) those two adds cost zapsink's Core 9 % of the records it wrote
// into a healthy file from 256 goroutines (see Writer.calls). So the count
// is striped by the CPU a call runs on, where the CPU is cheap to read
// (machine.CPUReadable: linux/amd64 with RDPID); elsewhere it is one
// counter.
//
// A call may end on another CPU than it began on, so a stripe can go
// negative and only the sum means anything; quiet reads it. A call that
// finds the Writer closed takes its one back from the stripe it added to
// (undo), which is what makes the sum safe: see quiet.
type callCount struct {
	stripes []paddedCount
	mask    uint32 // len(stripes)-1, a power of two minus one
	byCPU   bool
}

// paddedCount is one stripe, on a cache line of its own.
type paddedCount struct {
	n atomic.Int64
	_ [layout.CacheLine - 8]byte
}

// newCallCount returns a callCount with a stripe per CPU the process may
// run on (rounded up to a power of two, at most maxCallStripes), or one.
func newCallCount() callCount {
	n := 1
	byCPU := machine.CPUReadable()
	if byCPU {
		n = 1 << bits.Len(uint(min(max(len(machine.CPUs()), 1), maxCallStripes)-1))
	}
	return callCount{stripes: make([]paddedCount, n), mask: uint32(n - 1), byCPU: byCPU}
}

// maxCallStripes bounds the stripes: Close sums them all, and CPUs beyond
// it share stripes (CPU numbers are taken modulo the count).
const maxCallStripes = 256

// begin counts a call in and returns its stripe, for undo.
func (c *callCount) begin() *atomic.Int64 {
	n := c.stripe()
	n.Add(1)
	return n
}

// undo takes back the one that begin added to stripe n: for a call that
// found the Writer closed.
func (c *callCount) undo(n *atomic.Int64) { n.Add(-1) }

// end counts a call out, on the stripe of the CPU it ends on.
func (c *callCount) end() { c.stripe().Add(-1) }

func (c *callCount) stripe() *atomic.Int64 {
	if !c.byCPU {
		return &c.stripes[0].n
	}
	return &c.stripes[machine.CPU()&c.mask].n
}

// quiet reports whether no call is between its begin and its end, for
// Close, which has stored closed before it calls quiet. It sums the
// stripes, one load each, at different instants. A call that began before
// closed was stored added its one before any of these loads, so it adds one
// to the sum, less one only if its end is loaded too: never below zero. A
// call that began after it sees closed and undoes on the same stripe, so
// it adds one or nothing. A call still in flight after the last load adds
// exactly one. So a sum of zero means that no call was in flight at the
// last load, and none can begin a push after it.
func (c *callCount) quiet() bool {
	var sum int64
	for i := range c.stripes {
		sum += c.stripes[i].n.Load()
	}
	return sum == 0
}
