package ringtest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/shardedsink/shardedsink/internal/allocs"
	"github.com/shardedsink/shardedsink/ring"
)

// RunBadCapacity checks what the ring contract asks of a capacity below 1:
// f(0) and f(-1) panic with a string that starts with pkg and a colon (the
// backend's package name) and shows the value, as in
// "vyukov: capacity must be at least 1, got 0".
func RunBadCapacity(t *testing.T, f ring.Factory[int], pkg string) {
	t.Helper()
	for _, c := range []int{0, -1} {
		if err := checkBadCapacity(f, pkg, c); err != nil {
			t.Error(err)
		}
	}
}

func checkBadCapacity(f ring.Factory[int], pkg string, c int) (err error) {
	defer func() {
		r := recover()
		msg, ok := r.(string)
		switch {
		case r == nil:
			err = fmt.Errorf("a ring of capacity %d was created without a panic", c)
		case !ok:
			err = fmt.Errorf("capacity %d: the panic value is %T %v, not a string", c, r, r)
		case !strings.HasPrefix(msg, pkg+": "):
			err = fmt.Errorf("capacity %d: the panic %q does not start with %q", c, msg, pkg+": ")
		case !strings.Contains(msg, strconv.Itoa(c)):
			err = fmt.Errorf("capacity %d: the panic %q does not show the value", c, msg)
		}
	}()
	f(c)
	return nil
}

// RunNoAllocs checks that the rings f creates allocate nothing per
// operation, called through the [ring.Ring] interface: a successful TryPush
// and TryPop, a TryPop on an empty ring, and a TryPush on a full one. Each
// is counted exactly over 1,000 calls, so a ring that allocates once in a
// hundred calls fails. It is not part of the ring contract, but the sink
// and the channel promise allocation-free pushes on top of it.
func RunNoAllocs(t *testing.T, f ring.Factory[int]) {
	t.Helper()
	if err := checkNoAllocs(f); err != nil {
		t.Error(err)
	}
}

// noAllocsCalls is how many calls of each operation checkNoAllocs counts.
const noAllocsCalls = 1000

func checkNoAllocs(f ring.Factory[int]) error {
	var errs []error
	r := f(4)
	if n := allocs.PerCall(noAllocsCalls, func() {
		r.TryPush(1)
		r.TryPop()
	}); n != 0 {
		errs = append(errs, fmt.Errorf("a successful TryPush and TryPop allocate %v times a call (over %d calls)", n, noAllocsCalls))
	}
	if n := allocs.PerCall(noAllocsCalls, func() { r.TryPop() }); n != 0 {
		errs = append(errs, fmt.Errorf("TryPop on an empty ring allocates %v times a call (over %d calls)", n, noAllocsCalls))
	}
	for r.TryPush(1) {
	}
	if n := allocs.PerCall(noAllocsCalls, func() { r.TryPush(1) }); n != 0 {
		errs = append(errs, fmt.Errorf("TryPush on a full ring allocates %v times a call (over %d calls)", n, noAllocsCalls))
	}
	return errors.Join(errs...)
}
