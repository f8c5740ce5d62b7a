package ringtest

import (
	"fmt"
	"runtime"
	"weak"

	"github.com/shardedsink/shardedsink/ring"
)

// payload is what the release checks push: a pointer to a block big enough to
// get its own allocation (the tiny allocator packs objects under 16 bytes
// together, and one live neighbour would keep them all alive).
type payload = *[64]byte

// checkPoppedReleased pushes fresh pointers, pops them, drops them, and
// checks with weak pointers that the garbage collector frees every one: a
// ring that leaves a popped value in its slot keeps it alive and fails. It
// fills the ring completely and from several starting slots, so that every
// slot is popped at least once.
func checkPoppedReleased(f ring.Factory[payload]) error {
	for _, capacity := range []int{1, 2, 3, 8, 100} {
		r := f(capacity)
		for offset := range min(capacity, 3) + 1 {
			watched, err := pushPop(r, offset, capacity)
			if err == nil {
				err = collected(watched)
			}
			if err != nil {
				return fmt.Errorf("capacity %d, after filling from slot %d and draining: %w", capacity, offset, err)
			}
		}
		runtime.KeepAlive(r)
	}
	return nil
}

// pushPop moves the ring's start on by offset slots, then fills and drains
// it, and returns weak pointers to everything that went through. It keeps no
// strong pointer once it returns.
//
//go:noinline
func pushPop(r ring.Ring[payload], offset, n int) ([]weak.Pointer[[64]byte], error) {
	var watched []weak.Pointer[[64]byte]
	for _, k := range []int{offset, n} {
		for range k {
			p := new([64]byte)
			watched = append(watched, weak.Make(p))
			if !r.TryPush(p) {
				return nil, fmt.Errorf("TryPush failed with %d of %d slots in use", r.Len(), r.Cap())
			}
		}
		for i := range k {
			p, ok := r.TryPop()
			if !ok {
				return nil, fmt.Errorf("TryPop failed with values in the ring")
			}
			if weak.Make(p) != watched[len(watched)-k+i] {
				return nil, fmt.Errorf("TryPop returned a pointer that was not pushed, or not in order")
			}
		}
	}
	return watched, nil
}

// checkRejectedReleased fills a ring, offers it one more pointer, which it
// must refuse, and checks that the refused pointer is freed once the caller
// drops it: a failed TryPush leaves the value with the caller.
func checkRejectedReleased(f ring.Factory[payload]) error {
	for _, capacity := range []int{1, 3, 8} {
		r := f(capacity)
		kept := make([]payload, capacity) // the ring's contents stay reachable from here too
		for i := range kept {
			kept[i] = new([64]byte)
			if !r.TryPush(kept[i]) {
				return fmt.Errorf("capacity %d: TryPush failed with %d values in the ring", capacity, i)
			}
		}
		w, err := pushRejected(r)
		if err == nil {
			err = collected([]weak.Pointer[[64]byte]{w})
		}
		if err != nil {
			return fmt.Errorf("capacity %d, full ring: %w", capacity, err)
		}
		runtime.KeepAlive(r)
		runtime.KeepAlive(kept)
	}
	return nil
}

//go:noinline
func pushRejected(r ring.Ring[payload]) (weak.Pointer[[64]byte], error) {
	p := new([64]byte)
	if r.TryPush(p) {
		return weak.Pointer[[64]byte]{}, fmt.Errorf("TryPush succeeded on a full ring")
	}
	return weak.Make(p), nil
}

// collected runs the garbage collector until every watched pointer is freed,
// and reports those still alive after several cycles.
func collected(watched []weak.Pointer[[64]byte]) error {
	alive := 0
	for range 5 {
		runtime.GC()
		alive = 0
		for _, w := range watched {
			if w.Value() != nil {
				alive++
			}
		}
		if alive == 0 {
			return nil
		}
	}
	return fmt.Errorf("%d of %d values still reachable after they left the ring and the caller dropped them: "+
		"the ring keeps a reference (is the popped slot zeroed?)", alive, len(watched))
}
