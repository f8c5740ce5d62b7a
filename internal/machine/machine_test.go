package machine

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

func TestStoreReleaseStoresTheValue(t *testing.T) {
	var x uint64
	for _, v := range []uint64{1, 0, 1 << 63, ^uint64(0), 42} {
		StoreRelease(&x, v)
		if got := atomic.LoadUint64(&x); got != v {
			t.Fatalf("after StoreRelease(&x, %#x), x = %#x", v, got)
		}
	}
}

// TestStoreReleasePublishesEarlierWrites is message passing between two
// locked OS threads: the writer fills a record with plain writes and
// publishes its sequence number with StoreRelease; the reader waits for the
// number with atomic.LoadUint64 and must then see the whole record. A
// compiler that moved a write past the publish, or a store that let the
// record's writes become visible after it, shows up as a torn record.
func TestStoreReleasePublishesEarlierWrites(t *testing.T) {
	rounds := 50_000
	if testing.Short() {
		rounds = 5_000
	}
	type record struct {
		a, b, c, d uint64
		_          [32]byte
		seq        uint64
		ack        uint64
	}
	var r record
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for i := uint64(1); i <= uint64(rounds); i++ {
			for atomic.LoadUint64(&r.ack) != i-1 {
				runtime.Gosched()
			}
			r.a, r.b, r.c, r.d = i, i*3, i*5, i*7
			StoreRelease(&r.seq, i)
		}
	}()
	torn := 0
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for i := uint64(1); i <= uint64(rounds); i++ {
			for atomic.LoadUint64(&r.seq) != i {
				runtime.Gosched()
			}
			if r.a != i || r.b != i*3 || r.c != i*5 || r.d != i*7 {
				torn++
			}
			StoreRelease(&r.ack, i)
		}
	}()
	wg.Wait()
	if torn > 0 {
		t.Fatalf("%d of %d records were read torn after their publish", torn, rounds)
	}
}

func TestCPUsListsTheAffinitySet(t *testing.T) {
	cpus := CPUs()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		if cpus != nil {
			t.Fatalf("CPUs() = %v on %s/%s, want nil", cpus, runtime.GOOS, runtime.GOARCH)
		}
		return
	}
	if len(cpus) != runtime.NumCPU() {
		t.Fatalf("CPUs() = %v (%d), runtime.NumCPU() = %d", cpus, len(cpus), runtime.NumCPU())
	}
	if !slices.IsSorted(cpus) {
		t.Fatalf("CPUs() = %v, not in increasing order", cpus)
	}
}

func BenchmarkCPU(b *testing.B) {
	var sink uint32
	for b.Loop() {
		sink += CPU()
	}
	_ = sink
}

func BenchmarkStore(b *testing.B) {
	var x struct {
		v uint64
		_ [56]byte
	}
	b.Run("impl=StoreRelease", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			StoreRelease(&x.v, uint64(i))
		}
	})
	b.Run("impl=atomic.StoreUint64", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			atomic.StoreUint64(&x.v, uint64(i))
		}
	})
}

func TestCPUIsZeroWhereItCannotBeRead(t *testing.T) {
	if CPUReadable() {
		t.Skip("CPU numbers are readable here")
	}
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		t.Skip("on linux/amd64 CPU still reads the register when it is not trusted")
	}
	if got := CPU(); got != 0 {
		t.Fatalf("CPU() = %d where CPUReadable is false, want 0", got)
	}
}
