package ringtest

import (
	"fmt"

	"github.com/shardedsink/shardedsink/ring"
)

// fifo is the sequential specification every ring is held to: a bounded
// first-in first-out queue.
type fifo struct {
	capacity int
	values   []int
}

func (q *fifo) push(v int) bool {
	if len(q.values) == q.capacity {
		return false
	}
	q.values = append(q.values, v)
	return true
}

func (q *fifo) pop() (int, bool) {
	if len(q.values) == 0 {
		return 0, false
	}
	v := q.values[0]
	q.values = q.values[1:]
	return v, true
}

// lockstep drives a ring and the fifo model with the same operations from one
// goroutine and reports the first disagreement. Pushed values count up from 1,
// so that no pushed value is the zero value a failed TryPop returns.
type lockstep struct {
	r     ring.Ring[int]
	model fifo
	next  int
	step  int
}

func newLockstep(f ring.Factory[int], capacity int) *lockstep {
	return &lockstep{r: f(capacity), model: fifo{capacity: capacity}, next: 1}
}

// push pushes the next value into both and compares the outcome.
func (l *lockstep) push() error {
	l.step++
	v := l.next
	l.next++
	want := l.model.push(v)
	if got := l.r.TryPush(v); got != want {
		return fmt.Errorf("step %d: TryPush(%d) = %t, want %t with %d of %d slots in use",
			l.step, v, got, want, len(l.model.values), l.model.capacity)
	}
	return l.sizes()
}

// pop pops from both and compares the outcome.
func (l *lockstep) pop() error {
	l.step++
	before := len(l.model.values)
	want, wantOK := l.model.pop()
	got, ok := l.r.TryPop()
	if ok != wantOK || got != want {
		return fmt.Errorf("step %d: TryPop() = (%d, %t), want (%d, %t) with %d of %d slots in use",
			l.step, got, ok, want, wantOK, before, l.model.capacity)
	}
	return l.sizes()
}

// sizes compares Len and Cap with the model.
func (l *lockstep) sizes() error {
	if got, want := l.r.Len(), len(l.model.values); got != want {
		return fmt.Errorf("step %d: Len() = %d, want %d", l.step, got, want)
	}
	if got, want := l.r.Cap(), l.model.capacity; got != want {
		return fmt.Errorf("step %d: Cap() = %d, want %d", l.step, got, want)
	}
	return nil
}
