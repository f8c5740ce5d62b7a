// Package logprobe is the harness of the front-ends' goal benchmarks
// (zapsink, zerologsink): many goroutines log for a fixed time into a
// destination, each call timed, and the result says how many calls were
// made, how long the slowest took and how many records reached the
// destination. It is used by benchmarks only.
package logprobe

import (
	"bytes"
	"io"
	"math"
	"math/bits"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardedsink/shardedsink/internal/cputime"
)

// Logger is one logger under test: Log logs record i, at the level that
// the writer keeps longest when keep is set (ERROR) and at INFO otherwise.
// Every record is one line, and a kept one holds KeepMark.
type Logger struct {
	Log func(i int, keep bool)
	// Close writes what is buffered and stops the logger (nil: nothing to
	// do); it is called once the goroutines have stopped logging.
	Close func()
	// Metrics, when set, reports metrics of the logger's own (a diode's
	// missed count) into b once Close has returned.
	Metrics func(b *testing.B)
}

// KeepMark is what a kept record holds (its message), and no other.
const KeepMark = "kept-record"

// Result is what a probe measured.
type Result struct {
	Calls      uint64        // log calls made
	Kept       uint64        // of Calls, those with keep set during the stall
	Reached    uint64        // records that reached the destination (lines, drop reports left out by the caller's count)
	KeptLost   uint64        // kept records logged during the stall that did not reach it
	P99, Max   time.Duration // of one call
	Elapsed    time.Duration // from the first call to the end of Close
	KeepPeriod int           // one call in KeepPeriod has keep set
}

// hist is a histogram of call times: 16 buckets per power of two, so a
// quantile is within 1/16 of the time it reports.
type hist struct {
	n   [64 * 16]uint64
	max int64
}

func (h *hist) add(d int64) {
	if d > h.max {
		h.max = d
	}
	h.n[bucket(d)]++
}

func bucket(d int64) int {
	if d < 16 {
		return int(max(d, 0))
	}
	e := bits.Len64(uint64(d)) - 1 // d in [2^e, 2^(e+1))
	m := int(uint64(d)>>(e-4)) & 15
	return (e-3)*16 + m
}

// upper is the upper end of bucket k's range.
func upper(k int) int64 {
	if k < 16 {
		return int64(k)
	}
	e := k/16 + 3
	m := k % 16
	return int64(16+m+1) << (e - 4)
}

func (h *hist) merge(o *hist) {
	for k, n := range o.n {
		h.n[k] += n
	}
	h.max = max(h.max, o.max)
}

func (h *hist) quantile(q float64) int64 {
	var total uint64
	for _, n := range h.n {
		total += n
	}
	want := uint64(math.Ceil(q * float64(total)))
	var seen uint64
	for k, n := range h.n {
		seen += n
		if seen >= want && n > 0 {
			return min(upper(k), h.max)
		}
	}
	return h.max
}

// run makes goroutines log through lg for d, one call in keepPeriod with
// keep set; stallEnd is the time up to which kept calls are counted.
// before, when set, runs before each call of goroutine g, untimed (the
// work of a busy process, or the pacing of an offered rate).
func run(lg Logger, goroutines int, d time.Duration, keepPeriod int, stallEnd time.Time, before func(g int)) (calls, kept uint64, h hist, start time.Time) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var ncalls, nkept atomic.Uint64
	start = time.Now()
	deadline := start.Add(d)
	for g := range goroutines {
		wg.Go(func() {
			var local hist
			var c, k uint64
			for i := g << 24; ; i++ { // apart by 2^24: room for any run, in a 32-bit int too
				if before != nil {
					before(g)
				}
				t0 := time.Now()
				if !t0.Before(deadline) {
					break
				}
				keep := keepPeriod > 0 && i%keepPeriod == 0 && t0.Before(stallEnd)
				lg.Log(i, keep)
				local.add(int64(time.Since(t0)))
				c++
				if keep {
					k++
				}
			}
			ncalls.Add(c)
			nkept.Add(k)
			mu.Lock()
			h.merge(&local)
			mu.Unlock()
		})
	}
	wg.Wait()
	return ncalls.Load(), nkept.Load(), h, start
}

// Stalled runs the stalled-pipe probe: goroutines log for d into an
// os.Pipe whose reader waits stall before it drains; one call in
// keepPeriod during the stall is a kept record. open makes the logger on
// the pipe's writer. The reader counts the lines and the kept records that
// reach it; isReport tells it which lines are drop reports, not counted.
func Stalled(open func(w io.Writer) Logger, goroutines int, d, stall time.Duration, keepPeriod int, isReport func(line []byte) bool) (Result, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return Result{}, err
	}
	lg := open(w)
	var reached, keptReached uint64
	read := make(chan error, 1)
	go func() {
		time.Sleep(stall)
		buf := make([]byte, 0, 1<<20)
		chunk := make([]byte, 256<<10)
		for {
			n, err := r.Read(chunk)
			buf = append(buf, chunk[:n]...)
			// Whole lines only; the rest waits for the next read.
			last := bytes.LastIndexByte(buf, '\n')
			if last >= 0 {
				for line := range bytes.SplitSeq(buf[:last], []byte{'\n'}) {
					if isReport(line) {
						continue
					}
					reached++
					if bytes.Contains(line, []byte(KeepMark)) {
						keptReached++
					}
				}
				buf = append(buf[:0], buf[last+1:]...)
			}
			if err != nil {
				read <- nil
				return
			}
		}
	}()
	calls, kept, h, start := run(lg, goroutines, d, keepPeriod, time.Now().Add(stall), nil)
	if lg.Close != nil {
		lg.Close()
	}
	elapsed := time.Since(start)
	_ = w.Close()
	<-read
	_ = r.Close()
	res := Result{Calls: calls, Kept: kept, Reached: reached, P99: time.Duration(h.quantile(0.99)), Max: time.Duration(h.max), Elapsed: elapsed, KeepPeriod: keepPeriod}
	if kept > keptReached {
		res.KeptLost = kept - keptReached
	}
	return res, nil
}

// Healthy runs goroutines logging for d into the file f (no kept records)
// and counts the lines the file holds afterwards, drop reports left out.
func Healthy(open func(w io.Writer) Logger, f *os.File, goroutines int, d time.Duration, isReport func(line []byte) bool) (Result, error) {
	return intoFile(open, f, goroutines, d, isReport, nil)
}

// Busy is Healthy for a process that works between records: each
// goroutine burns work of CPU (a spin on the clock) before each call.
// Calls per second is then the work done per second.
func Busy(open func(w io.Writer) Logger, f *os.File, goroutines int, d, work time.Duration, isReport func(line []byte) bool) (Result, error) {
	return intoFile(open, f, goroutines, d, isReport, func(int) {
		for t0 := time.Now(); time.Since(t0) < work; {
		}
	})
}

// Offered is Healthy at an offered rate: the goroutines together log rate
// records per second (each its share, on a schedule it catches up on when
// late), while spinners more goroutines keep the cores busy for d without
// logging.
func Offered(open func(w io.Writer) Logger, f *os.File, goroutines int, d time.Duration, rate float64, spinners int, isReport func(line []byte) bool) (Result, error) {
	interval := time.Duration(float64(goroutines) / rate * float64(time.Second))
	start := time.Now()
	next := make([]time.Time, goroutines) // each goroutine's own slot
	for g := range next {
		next[g] = start.Add(time.Duration(g) * interval / time.Duration(goroutines))
	}
	var stop atomic.Bool
	var spin sync.WaitGroup
	for range spinners {
		spin.Go(func() {
			for !stop.Load() { // spins on purpose: a core kept busy
			}
		})
	}
	res, err := intoFile(open, f, goroutines, d, isReport, func(g int) {
		if wait := time.Until(next[g]); wait > 0 {
			time.Sleep(wait)
		}
		next[g] = next[g].Add(interval)
	})
	stop.Store(true)
	spin.Wait()
	return res, err
}

// intoFile runs goroutines logging through the logger open makes on f for
// d, before each call running before (nil: none), and counts the lines f
// holds afterwards, drop reports left out.
func intoFile(open func(w io.Writer) Logger, f *os.File, goroutines int, d time.Duration, isReport func(line []byte) bool, before func(g int)) (Result, error) {
	lg := open(f)
	calls, _, h, start := run(lg, goroutines, d, 0, time.Time{}, before)
	if lg.Close != nil {
		lg.Close()
	}
	elapsed := time.Since(start)
	reached, err := countLines(f.Name(), isReport)
	if err != nil {
		return Result{}, err
	}
	return Result{Calls: calls, Reached: reached, P99: time.Duration(h.quantile(0.99)), Max: time.Duration(h.max), Elapsed: elapsed}, nil
}

// countLines counts the non-empty lines of the file at path that are not
// drop reports, reading it through one buffer of countChunk bytes. A
// probe's file holds hundreds of megabytes: read whole, it left that
// much garbage, and the runtime's scavenger spent the next runs handing
// it back to the kernel (GODEBUG=scavtrace=1: 12 to 43 MiB at a time for
// seconds), which slowed them and the cores' round trip measured before
// them.
func countLines(path string, isReport func(line []byte) bool) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var reached uint64
	buf := make([]byte, 0, countChunk)
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		last := bytes.LastIndexByte(buf, '\n')
		if err == io.EOF {
			last = len(buf) // a last line without its newline counts too
		} else if err != nil {
			return 0, err
		}
		if last >= 0 {
			for line := range bytes.SplitSeq(buf[:last], []byte{'\n'}) {
				if len(line) > 0 && !isReport(line) {
					reached++
				}
			}
		}
		if err == io.EOF {
			return reached, nil
		}
		if last < 0 {
			if len(buf) == cap(buf) { // a line longer than the buffer
				buf = append(buf, 0)[:len(buf)]
			}
			continue
		}
		buf = buf[:copy(buf, buf[last+1:])]
	}
}

// countChunk is the size of countLines' buffer.
const countChunk = 1 << 20

// Counts are a logsink writer's Written and the sum of its Written,
// Dropped, Errors, Abandoned and Empty; nil for a logger without one.
type Counts func() (written, counted uint64)

// Report puts res into b's metrics: calls, calls/s, %reached, the p99 and
// the max of a call, the kept calls and those lost when the probe had
// some, and, with counts, the calls that the writer's Stats leave out
// ("unaccounted": every call must be written, dropped or counted as an
// error, exactly) and the difference between the records that reached
// the destination and the writer's Written ("miscounted").
func (res Result) Report(b *testing.B, counts Counts) {
	b.ReportMetric(float64(res.Calls), "calls")
	b.ReportMetric(float64(res.Calls)/res.Elapsed.Seconds(), "calls/s")
	b.ReportMetric(float64(res.Reached)/res.Elapsed.Seconds(), "written/s")
	b.ReportMetric(float64(res.Calls-min(res.Reached, res.Calls)), "lost")
	b.ReportMetric(100*float64(res.Reached)/float64(max(res.Calls, 1)), "%reached")
	b.ReportMetric(float64(res.P99.Nanoseconds()), "p99-call-ns")
	b.ReportMetric(float64(res.Max.Nanoseconds()), "max-call-ns")
	if res.KeepPeriod > 0 {
		b.ReportMetric(float64(res.Kept), "kept-calls")
		b.ReportMetric(float64(res.KeptLost), "kept-lost")
	}
	if counts != nil {
		written, counted := counts()
		b.ReportMetric(float64(int64(res.Calls)-int64(counted)), "unaccounted")
		b.ReportMetric(float64(int64(res.Reached)-int64(written)), "miscounted")
	}
}

// IdleCPU returns the process's CPU time over d, in % of one core.
func IdleCPU(d time.Duration) (float64, error) {
	c0, err := cputime.Process()
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	time.Sleep(d)
	c1, err := cputime.Process()
	if err != nil {
		return 0, err
	}
	return 100 * float64(c1-c0) / float64(time.Since(t0)), nil
}
