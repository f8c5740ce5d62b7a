package ringtest

import (
	"fmt"
	"time"
)

// Values in the concurrent checks carry their producer and sequence number:
// value = (producer+1)<<seqBits | seq. No such value is zero, so a ring that
// hands out a zero value as a success is caught too. It fits in a 32-bit int
// for up to 1,023 producers of up to 2^20 values each.
const seqBits = 20

func encode(producer, seq int) int { return (producer+1)<<seqBits | seq }

func decode(v int) (producer, seq int) { return v>>seqBits - 1, v & (1<<seqBits - 1) }

// tally accounts for every value of a concurrent check: each must arrive
// exactly once, and each consumer must see each producer's values in the
// order that producer pushed them (FIFO implies it: a producer's earlier push
// takes effect first, so its value leaves first, and one consumer's pops take
// effect in program order).
type tally struct {
	producers, perProducer int
	seen                   []bool
}

func newTally(producers, perProducer int) *tally {
	return &tally{producers: producers, perProducer: perProducer, seen: make([]bool, producers*perProducer)}
}

// add accounts for the values one consumer received, in the order it
// received them.
func (t *tally) add(consumer int, got []int) error {
	last := make([]int, t.producers)
	for i := range last {
		last[i] = -1
	}
	for _, v := range got {
		p, seq := decode(v)
		if p < 0 || p >= t.producers || seq >= t.perProducer {
			return fmt.Errorf("consumer %d popped %d, which no producer pushed", consumer, v)
		}
		if t.seen[p*t.perProducer+seq] {
			return fmt.Errorf("value %d of producer %d popped twice", seq, p)
		}
		t.seen[p*t.perProducer+seq] = true
		if seq <= last[p] {
			return fmt.Errorf("consumer %d popped value %d of producer %d after its value %d: per-producer order lost",
				consumer, seq, p, last[p])
		}
		last[p] = seq
	}
	return nil
}

// complete reports values that nobody popped.
func (t *tally) complete() error {
	missing := 0
	first := -1
	for i, ok := range t.seen {
		if !ok {
			if first < 0 {
				first = i
			}
			missing++
		}
	}
	if missing > 0 {
		return fmt.Errorf("%d of %d values never popped (the first: value %d of producer %d)",
			missing, len(t.seen), first%t.perProducer, first/t.perProducer)
	}
	return nil
}

// stallLimit bounds each run of producers and consumers: a correct ring
// finishes one in well under a second, so a run still going after this long
// is stuck on a ring that lost a value or never stops reporting full or
// empty.
const stallLimit = 30 * time.Second

// deadline is a channel that closes after stallLimit. Retry loops poll it so
// that a stuck check ends with an error instead of hanging the test binary.
type deadline struct {
	passed chan struct{}
	timer  *time.Timer
}

func startDeadline() *deadline {
	d := &deadline{passed: make(chan struct{})}
	d.timer = time.AfterFunc(stallLimit, func() { close(d.passed) })
	return d
}

func (d *deadline) expired() bool {
	select {
	case <-d.passed:
		return true
	default:
		return false
	}
}

// stop releases the timer and reports an error if the deadline had passed.
func (d *deadline) stop() error {
	d.timer.Stop()
	if d.expired() {
		return errStalled
	}
	return nil
}

var errStalled = fmt.Errorf("no completion within %v: the ring stalled", stallLimit)
