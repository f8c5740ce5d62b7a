package engine

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// maxQueuedErrors is the most errors that wait for OnError while a call of
// it is in progress; the errors beyond are counted and delivered as one.
const maxQueuedErrors = 64

// errorCalls hands errors to OnError one call at a time without making
// anybody wait for a call in progress: the goroutine that meets an error
// queues it and calls OnError only if no call is in progress; otherwise
// the goroutine making that call delivers it when its call returns. So a
// slow OnError holds up only the goroutine that calls it, never a Write,
// a drain worker's lock or a logging call that met an error of its own.
type errorCalls struct {
	calling atomic.Bool // a goroutine is delivering

	mu    sync.Mutex // guards the queue
	queue [maxQueuedErrors]error
	head  int // queue[head] is the oldest
	n     int
	lost  uint64 // errors not queued because the queue was full
	name  string // Options.Name, for the error that counts the lost ones
}

// queueError queues err for OnError; it takes only the queue's lock, so it
// may be called under the write and shard locks. deliverErrors, called
// after those are released, delivers it.
func (w *Writer) queueError(err error) {
	if w.opts.OnError == nil {
		return
	}
	e := &w.errs
	e.mu.Lock()
	if e.n < maxQueuedErrors {
		e.queue[(e.head+e.n)%maxQueuedErrors] = err
		e.n++
	} else {
		e.lost++
	}
	e.mu.Unlock()
}

// deliverErrors calls OnError with every queued error, unless another
// goroutine is doing so, which then delivers them. A goroutine that stops
// delivering looks at the queue once more after it has said so, so an
// error queued meanwhile is not left behind.
func (w *Writer) deliverErrors() {
	e := &w.errs
	for e.pending() && e.calling.CompareAndSwap(false, true) {
		w.deliverQueued()
	}
}

// deliverQueued is the delivering goroutine's loop. A Goexit in OnError
// ends it (and its goroutine) with the flag cleared, so the next error
// delivers what is left.
func (w *Writer) deliverQueued() {
	e := &w.errs
	defer e.calling.Store(false)
	for {
		err := e.pop()
		if err == nil {
			return
		}
		w.callOnError(err)
	}
}

func (e *errorCalls) pending() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.n > 0 || e.lost > 0
}

// pop takes the oldest queued error, or one that counts the errors the
// full queue turned away, or returns nil.
func (e *errorCalls) pop() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.n > 0 {
		err := e.queue[e.head]
		e.queue[e.head] = nil
		e.head = (e.head + 1) % maxQueuedErrors
		e.n--
		return err
	}
	if e.lost > 0 {
		err := fmt.Errorf("%s: %d more errors while OnError was busy (their records are counted in Errors)", e.name, e.lost)
		e.lost = 0
		return err
	}
	return nil
}

// callOnError calls OnError with err; a panic in it is recovered and
// counted in Panics.
func (w *Writer) callOnError(err error) {
	returned := false
	defer func() {
		if !returned {
			w.reportPanic("OnError", recover())
		}
	}()
	w.opts.OnError(err)
	returned = true
}
