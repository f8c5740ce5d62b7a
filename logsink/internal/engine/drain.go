package engine

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"github.com/shardedsink/shardedsink/internal/sinkhook"
)

// maxWrite is the most bytes the drain worker puts into one Write (a longer
// record is written alone). It bounds how long one Write call copies and
// writes: copying 256 KiB takes tens of microseconds, and a
// Write of it to a local file a few hundred at most (the package doc has the
// measurement).
const maxWrite = 256 << 10

// drain writes a batch: it copies the formatted records into Writes of at
// most maxWrite bytes, from a buffer of that size that the shard keeps; a
// record longer than that is written alone, from its own bytes. With
// stealing off, a batch holds the entries of one shard.
//
// The batch's Records go back into the pool once they are written (after
// a Write that panicked or called runtime.Goexit, to the garbage
// collector). Every record of the batch is counted once: written, failed (a Write that
// failed, panicked or called runtime.Goexit, counted by write), or
// abandoned (the ctx of the Drain call ended, which happens only when
// Close's ctx ended first). The errors go to OnError once the shard's lock
// is released.
func (w *Writer) drain(ctx context.Context, batch []*Record) {
	if len(batch) == 0 {
		return
	}
	start := time.Now()
	defer w.timeTurn(start)
	st := &w.shards[batch[0].e.shard]
	// After the pops (the sink took the batch from the ring before this
	// call), so queued never falls below the ring's length. Entries read
	// back from the spill tier left queued when they were spilled.
	inRing, markers := 0, 0
	for _, r := range batch {
		if !r.e.fromDisk {
			inRing++
			if r.e.marker {
				markers++
			}
		}
	}
	st.counts.addQueued(-int64(inRing))
	if markers > 0 {
		st.markers.Add(-int64(markers))
	}
	st.mu.Lock()
	pos := 0 // batch[:pos] is written or in out
	returned := false
	defer func() {
		if !returned {
			// A Goexit in the writer (write counted its records): the
			// records not yet copied are lost too.
			w.failed.Add(uint64(records(batch[pos:])))
		}
		st.mu.Unlock()
		w.deliverErrors()
	}()
	if st.out == nil {
		st.out = make([]byte, 0, maxWrite) // once: the drain never allocates
	}
	out, n := st.out[:0], 0
	calls, _ := sinkhook.CallsOf(ctx)
	for pos < len(batch) {
		e := &batch[pos].e
		p := e.bytes()
		rec := 1
		if e.marker {
			rec = 0
		}
		if len(out)+len(p) > maxWrite {
			if len(out) > 0 {
				w.write(calls, out, n)
				out, n = out[:0], 0
				if ctx.Err() != nil {
					break // Close's ctx has ended: give up on the rest
				}
			}
			if len(p) > maxWrite {
				pos++
				w.write(calls, p, rec)
				if ctx.Err() != nil {
					break
				}
				continue
			}
		}
		out = append(out, p...)
		n += rec
		pos++
	}
	if pos < len(batch) {
		w.abandoned.Add(uint64(records(batch[pos:])))
		pos = len(batch)
	}
	w.write(calls, out, n)
	returned = true
	for _, r := range batch {
		PutRecord(r) // the sink holds no copy: Drain's values are its own
	}
}

// timeTurn records the time since start as a drain turn if it is the
// longest so far.
func (w *Writer) timeTurn(start time.Time) {
	d := int64(time.Since(start))
	for m := w.maxTurn.Load(); d > m && !w.maxTurn.CompareAndSwap(m, d); m = w.maxTurn.Load() {
	}
}

// write writes p, which holds whole records, n of them not markers, and
// counts them: written, or failed when the Write fails, panics or calls
// runtime.Goexit. A panic is recovered here, so it reaches neither the
// sink nor Close's caller. An error is queued for OnError, which the
// caller calls once its own locks are released (deliverErrors). calls,
// the Drain call's timer (one that does nothing outside one), times the Write, not the wait
// for wmu (another worker's Write is timed by that worker): the sink then
// tells a slow destination from a worker that lacks CPU between Writes
// (internal/sinkhook.Calls).
func (w *Writer) write(calls sinkhook.Calls, p []byte, n int) {
	if len(p) == 0 {
		return // n is 0: no record is empty (Stream counts those in Stats.Empty)
	}
	w.wmu.Lock()
	returned := false
	defer func() {
		if !returned {
			w.writeStart.Store(0)
			calls.End()
		}
		w.wmu.Unlock()
		if !returned {
			w.failed.Add(uint64(n))
			w.reportPanic("the writer", recover())
		}
	}()
	w.writeStart.Store(max(1, int64(time.Since(w.epoch))))
	calls.Begin()
	m, err := w.dst.Write(p)
	returned = true
	w.writeStart.Store(0)
	calls.End()
	if err == nil && m < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.failed.Add(uint64(n))
		w.queueError(err)
		return
	}
	w.written.Add(uint64(n))
}

// panicReportEvery is the least time between two reports of recovered
// panics through the Logger: a writer that panics on every Write would fill
// the log.
const panicReportEvery = time.Minute

// reportPanic counts a recovered panic (p, nil for a runtime.Goexit) in
// where and logs it through the Logger, with its stack, unless another
// report went out less than a minute ago. The Logger's own panic is
// recovered.
func (w *Writer) reportPanic(where string, p any) {
	total := w.panics.Add(1)
	if !w.panicReports.Turn(time.Now().UnixNano(), panicReportEvery) {
		return
	}
	what := "panicked"
	val := fmt.Sprint(p)
	if p == nil {
		what, val = "called runtime.Goexit", ""
	}
	defer func() { _ = recover() }()
	w.logger.Error(w.opts.Name+": "+where+" "+what+"; its records are counted in Errors",
		"panic", val, "panics", total, "stack", string(debug.Stack()))
}
