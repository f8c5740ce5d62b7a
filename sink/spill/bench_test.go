package spill

import (
	"errors"
	"io"
	"testing"
)

// benchBudget keeps the benchmarks' files under 256 MiB: when it is
// reached, the timer stops while the other side empties or refills it.
const benchBudget = 256 << 20

// BenchmarkAppend is the cost of spilling one 200-byte value: the frame,
// the checksum, the copy, and a share of the 64 KiB writes (no fsync: the
// sink syncs once per interval). go test -bench . ./sink/spill/
func BenchmarkAppend(b *testing.B) {
	l := open(b, b.TempDir(), Options{MaxBytes: benchBudget})
	defer l.Close()
	p := make([]byte, 200)
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		err := l.Append(p)
		if errors.Is(err, ErrFull) {
			b.StopTimer()
			drain(b, l)
			b.StartTimer()
			err = l.Append(p)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead is the cost of reading one 200-byte value back, from the
// page cache (the segments were just written).
func BenchmarkRead(b *testing.B) {
	l := open(b, b.TempDir(), Options{MaxBytes: benchBudget})
	defer l.Close()
	p := make([]byte, 200)
	fill := func() {
		for l.Append(p) == nil {
		}
		if err := l.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	fill()
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		_, err := l.Next()
		if err == io.EOF {
			b.StopTimer()
			if err := l.Done(); err != nil {
				b.Fatal(err)
			}
			fill()
			b.StartTimer()
			_, err = l.Next()
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// drain reads l to its end and marks it done.
func drain(b *testing.B, l *Log) {
	for {
		_, err := l.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Done(); err != nil {
		b.Fatal(err)
	}
}
