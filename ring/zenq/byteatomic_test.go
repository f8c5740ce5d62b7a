//go:build zenq

package zenq

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// words is memory for the byte atomics to work on: four aligned 32-bit words
// seen as 16 bytes, so that every byte position in a word is covered and a
// write that spills into a neighbouring byte or word shows.
type words struct {
	w [4]uint32
}

func (m *words) bytes() *[16]byte { return (*[16]byte)(unsafe.Pointer(&m.w)) }

// byteOps are the four functions zenq links to, with a sequential model of
// each: what the byte must hold afterwards, given what it held before.
var byteOps = []struct {
	name  string
	apply func(p *uint8, v uint8) uint8 // returns what the operation returns (load8) or 0
	model func(old, v uint8) (newByte, result uint8)
}{
	{"Load8", func(p *uint8, _ uint8) uint8 { return load8(p) },
		func(old, _ uint8) (uint8, uint8) { return old, old }},
	{"Store8", func(p *uint8, v uint8) uint8 { store8(p, v); return 0 },
		func(_, v uint8) (uint8, uint8) { return v, 0 }},
	{"And8", func(p *uint8, v uint8) uint8 { and8(p, v); return 0 },
		func(old, v uint8) (uint8, uint8) { return old & v, 0 }},
	{"Or8", func(p *uint8, v uint8) uint8 { or8(p, v); return 0 },
		func(old, v uint8) (uint8, uint8) { return old | v, 0 }},
}

func TestByteAtomicsMatchASequentialModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, op := range byteOps {
		t.Run(op.name, func(t *testing.T) {
			for pos := range 16 { // all 4 byte positions of each of the 4 words
				for range 200 {
					var m words
					for i := range m.w {
						m.w[i] = rng.Uint32()
					}
					want := *m.bytes()
					v := uint8(rng.Uint32())
					var wantResult uint8
					want[pos], wantResult = op.model(want[pos], v)

					got := op.apply(&m.bytes()[pos], v)
					require.Equal(t, wantResult, got, "byte %d, operand %#x", pos, v)
					require.Equal(t, want, *m.bytes(), "byte %d, operand %#x: only that byte may change", pos, v)
				}
			}
		})
	}
}

func TestWordOfFindsTheByteInItsWord(t *testing.T) {
	var m words
	m.w[1] = 0x44332211
	for i := range 4 {
		w, shift := wordOf(&m.bytes()[4+i])
		require.Same(t, &m.w[1], w)
		// On this little-endian machine byte i of the word is bits 8i..8i+7.
		require.Equal(t, uint8(0x11*(i+1)), uint8(*w>>shift), "byte %d", i)
	}
}

func TestByteAtomicsOnNeighbouringBytesDoNotLoseUpdates(t *testing.T) {
	// Four goroutines, each the only writer of one byte of the same word.
	// A byte operation that wrote the whole word non-atomically would
	// overwrite a neighbour's fresh value with a stale one.
	const rounds = 20_000
	var m words
	b := m.bytes()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for pos := range 4 {
		wg.Go(func() {
			p := &b[pos]
			for i := range rounds {
				v := uint8(i)
				store8(p, v)
				if got := load8(p); got != v {
					errs <- fmt.Errorf("byte %d: stored %#x, loaded %#x", pos, v, got)
					return
				}
				bit := uint8(1) << (i % 8)
				or8(p, bit)
				if got := load8(p); got != v|bit {
					errs <- fmt.Errorf("byte %d: %#x | %#x gave %#x", pos, v, bit, got)
					return
				}
				and8(p, ^bit)
				if got := load8(p); got != v&^bit {
					errs <- fmt.Errorf("byte %d: (%#x|%#x) &^ %#x gave %#x", pos, v, bit, bit, got)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	last := uint8((rounds - 1) % 256)
	lastBit := uint8(1) << ((rounds - 1) % 8)
	require.Equal(t, [4]byte{last &^ lastBit, last &^ lastBit, last &^ lastBit, last &^ lastBit}, [4]byte(b[:4]))
	require.Zero(t, m.w[1]|m.w[2]|m.w[3], "the other words stay untouched")
}

func TestOr8AndAnd8OnOneByteAreAtomic(t *testing.T) {
	// Eight goroutines share one byte, each owning one bit of it, and set
	// and clear their bit many times. Every update must survive the others.
	const rounds = 20_000
	var m words
	p := &m.bytes()[2]
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for bit := range 8 {
		wg.Go(func() {
			mask := uint8(1) << bit
			for range rounds {
				or8(p, mask)
				if load8(p)&mask == 0 {
					errs <- fmt.Errorf("bit %d lost after Or8", bit)
					return
				}
				and8(p, ^mask)
				if load8(p)&mask != 0 {
					errs <- fmt.Errorf("bit %d survived And8", bit)
					return
				}
			}
			or8(p, mask) // leave the bit set
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, uint8(0xff), load8(p))
	require.Equal(t, uint32(0xff)<<16, m.w[0], "the other bytes of the word stay zero")
}
