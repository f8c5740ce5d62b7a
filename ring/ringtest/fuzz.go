package ringtest

import (
	"fmt"
	"testing"

	"github.com/shardedsink/shardedsink/ring"
)

// Fuzz runs a fuzz target that checks the ring built by factory against a
// sequential bounded FIFO model. The input encodes a ring and a sequence of
// operations: the first byte picks the capacity (1 to 16), and each further
// byte b is one command, with b&3 selecting a single TryPush, a burst of
// TryPush calls, a single TryPop or a burst of TryPop calls, and b>>2 the
// length of a burst (1 to 64). After every call, the result, Len and Cap must
// agree with the model. Without -fuzz, go test runs the seed corpus.
func Fuzz(f *testing.F, factory ring.Factory[int]) {
	for _, seed := range fuzzSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, ops []byte) {
		if err := runOps(factory, ops); err != nil {
			t.Fatal(err)
		}
	})
}

// fuzzSeeds is the seed corpus of [Fuzz]: short runs that reach full and
// empty, wrap around, and burst past both ends.
var fuzzSeeds = [][]byte{
	{},
	{0, 0, 2, 0, 2, 2},                   // capacity 1: push, pop, push, pop, pop
	{2, 0, 0, 0, 0, 2, 2, 2, 2},          // capacity 3: overfill, overdrain
	{6, 0xfd, 0xff, 0x41, 0x43},          // capacity 7: bursts past full and empty
	{7, 0x1d, 0x0f, 0x1d, 0x1f, 0x1d},    // capacity 8: wrap around in bursts
	{15, 0x3d, 0x23, 0x21, 0x3f, 0x02},   // capacity 16
	{99, 0xfd, 0xfd, 0xff, 0x01, 0xff},   // capacity 4 (99 % 16 + 1)
	{4, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 3}, // capacity 5: interleaved
}

// runOps decodes and runs one fuzz input; see [Fuzz].
func runOps(factory ring.Factory[int], ops []byte) error {
	capacity := 1
	if len(ops) > 0 {
		capacity = 1 + int(ops[0]%16)
		ops = ops[1:]
	}
	l := newLockstep(factory, capacity)
	if err := l.sizes(); err != nil {
		return fmt.Errorf("capacity %d: new ring: %w", capacity, err)
	}
	for i, b := range ops {
		n := 1
		if b&1 == 1 {
			n = 1 + int(b>>2)
		}
		for range n {
			var err error
			if b&2 == 0 {
				err = l.push()
			} else {
				err = l.pop()
			}
			if err != nil {
				return fmt.Errorf("capacity %d, command %d (%#02x): %w", capacity, i, b, err)
			}
		}
	}
	return nil
}
