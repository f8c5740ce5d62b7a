package slogsink_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/slogsink"
)

var soakFor = flag.Duration("soak", 0, "how long TestSoak injects faults (default: a short run of about 2 s)")

// fault is what one Write of the soak's writer does.
type fault int

const (
	writeOK fault = iota
	writeError
	writePanic
	writeGoexit
	writeSlow
	writeBlock // until the round releases it: past Close's ctx
	faultKinds
)

// faultyWriter injects a fault into each Write with the round's odds, and
// keeps what it was given whole, so that the round can check the lines.
type faultyWriter struct {
	release chan struct{}
	odds    [faultKinds]int // weights
	seed    atomic.Uint64
	counts  [faultKinds]atomic.Int64

	mu  sync.Mutex
	out bytes.Buffer
}

func (w *faultyWriter) pick() fault {
	total := 0
	for _, o := range w.odds {
		total += o
	}
	r := rand.New(rand.NewPCG(w.seed.Add(1), 7)).IntN(total)
	for f, o := range w.odds {
		if r < o {
			return fault(f)
		}
		r -= o
	}
	return writeOK
}

var errInjected = errors.New("injected write error")

func (w *faultyWriter) Write(p []byte) (int, error) {
	f := w.pick()
	w.counts[f].Add(1)
	switch f {
	case writeError:
		return 0, errInjected
	case writePanic:
		panic("injected writer panic")
	case writeGoexit:
		runtime.Goexit()
	case writeSlow:
		time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
	case writeBlock:
		<-w.release
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.Write(p)
}

// TestSoak runs rounds of loggers against a handler whose writer, Format
// handler (ReplaceAttr, and a Format that writes nothing for some records)
// and OnError fail at random, with Flush and Close at random moments and
// GOMAXPROCS 1 or 2. After each round it checks that every record handled
// is counted once (Written + Dropped + Errors + Abandoned + Empty), that
// Abandoned is zero when Close returned nil, that every line written is
// whole, that the writer received exactly Written records, each once, that
// no goroutine is left, and it bounds every wait. Some records are large
// (up to 40 KiB, beyond a ring slot), and most rounds bound them with a
// small MaxQueuedBytes, so that records are shed for bytes too: those
// drops are a part of Dropped, and there are none without a bound. It runs
// until each fault has been injected at least once, and records shed for
// bytes (and fails if one never is), at least about 2 s. Run it for longer
// with -soak 5m.
func TestSoak(t *testing.T) {
	length := *soakFor
	if length == 0 {
		length = 2 * time.Second
		if testing.Short() {
			length = 300 * time.Millisecond
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var rounds int
	var fired [injectedKinds]int64
	var panics, errs, abandoned uint64
	allFired := func() bool {
		for _, n := range fired {
			if n == 0 {
				return false
			}
		}
		return true
	}
	end := time.Now().Add(length)
	giveUp := end.Add(time.Minute) // to see every fault fire
	for seed := uint64(1); rounds == 0 || time.Now().Before(end) || !allFired() && time.Now().Before(giveUp); seed++ {
		r := soakRound(t, seed)
		rounds++
		for f := range fired {
			fired[f] += r.fired[f]
		}
		panics += r.stats.Panics
		errs += r.stats.Errors
		abandoned += r.stats.Abandoned
		if t.Failed() {
			t.Fatalf("round %d (seed %d) failed", rounds, seed)
		}
	}
	var fs []string
	for f, n := range fired {
		fs = append(fs, fmt.Sprintf("%s=%d", injectedNames[f], n))
	}
	t.Logf("%d rounds in %v; faults %v; recovered panics %d, records lost to errors %d, abandoned %d",
		rounds, length, fs, panics, errs, abandoned)
	for f, n := range fired {
		require.Positive(t, n, "in %d rounds the soak never injected %s", rounds, injectedNames[f])
	}
}

// The faults the soak injects beyond the writer's, counted per round.
const (
	replacePanic = int(faultKinds) + iota
	replaceGoexit
	onErrorPanic
	emptyRecord // a record the Format handler writes nothing for
	closeCut    // a Close whose ctx ended first
	shedBytes   // records shed for bytes (MaxQueuedBytes)
	injectedKinds
)

var injectedNames = [injectedKinds]string{"write ok", "write error", "write panic", "write goexit", "slow write", "blocked write",
	"ReplaceAttr panic", "ReplaceAttr goexit", "OnError panic", "empty record", "Close cut short", "shed for bytes"}

type roundResult struct {
	fired [injectedKinds]int64
	stats slogsink.Stats
}

func soakRound(t *testing.T, seed uint64) (res roundResult) {
	rng := rand.New(rand.NewPCG(seed, 1))
	before := goleak.IgnoreCurrent()
	runtime.GOMAXPROCS(1 + rng.IntN(2))

	w := &faultyWriter{release: make(chan struct{})}
	w.seed.Store(seed << 32)
	w.odds = [faultKinds]int{writeOK: 40, writeError: rng.IntN(4), writePanic: rng.IntN(4), writeGoexit: rng.IntN(3), writeSlow: rng.IntN(10), writeBlock: rng.IntN(2)}
	panicOdds := rng.IntN(20) // in 1000 records
	format := []string{"json", "json", "text", "sampled"}[rng.IntN(4)]
	var replacePanics, replaceGoexits, onErrorPanics atomic.Int64
	opts := &slogsink.Options{
		Level:     slog.LevelDebug - 4,
		Buffering: logsink.Buffering{Shards: 1 + rng.IntN(4), RingCapacity: 2 + rng.IntN(256), BatchSize: 1 + rng.IntN(64)},
		Logger:    quiet,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == "boom" {
				switch a.Value.Int64() {
				case 1:
					replacePanics.Add(1)
					panic("injected ReplaceAttr panic")
				case 2:
					replaceGoexits.Add(1)
					runtime.Goexit()
				}
			}
			return a
		},
	}
	if rng.IntN(2) == 0 {
		opts.KeepLevel = slog.Level(rng.IntN(12) - 4)
	}
	// The byte budget: the default (64 MiB, never reached here), none, or
	// a few records' worth of large ones, which sheds.
	switch rng.IntN(4) {
	case 0:
	case 1:
		opts.MaxQueuedBytes = -1
	default:
		opts.MaxQueuedBytes = 1 + rng.IntN(256<<10)
	}
	largeOdds := []int{0, 2, 10, 50}[rng.IntN(4)] // in 100 records
	large := strings.Repeat("L", 40<<10)
	seen := new(atomic.Int64)
	switch format {
	case "text":
		opts.Format = slogsink.Text
	case "sampled": // writes every other record, in the locked mode
		opts.Format = func(w io.Writer, o *slog.HandlerOptions) slog.Handler {
			return sampler{slog.NewJSONHandler(w, o), 2, seen}
		}
	}
	if rng.IntN(3) == 0 {
		opts.OnError = func(error) {
			if rand.IntN(4) == 0 {
				onErrorPanics.Add(1)
				panic("injected OnError panic")
			}
		}
	}
	h, err := slogsink.New(w, opts)
	require.NoError(t, err)

	var handled atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	producers := 1 + rng.IntN(8)
	for p := range producers {
		var lg *slog.Logger
		if rng.IntN(3) == 0 {
			lg = slog.New(h) // shared by several producers
		} else {
			lg = slog.New(h).With("p", p).WithGroup(fmt.Sprintf("g%d", p%3))
		}
		pseed := rng.Uint64()
		wg.Go(func() {
			r := rand.New(rand.NewPCG(pseed, 2))
			for i := 0; !stop.Load() && i < 20000; i++ {
				level := slog.Level(r.IntN(16) - 6)
				boom := 0
				if r.IntN(1000) < panicOdds {
					boom = 1 + r.IntN(2)
				}
				body := ""
				if r.IntN(100) < largeOdds {
					body = large[:300+r.IntN(len(large)-300)]
				}
				handled.Add(1)
				lg.Log(context.Background(), level, "soak", "i", i, "boom", boom, "pad", i%7, "id", p<<20|i, "body", body)
				if r.IntN(64) == 0 {
					runtime.Gosched()
				}
			}
		})
	}
	// Flushes and Closes at random moments, with live, short and ended
	// ctxs.
	var ctl sync.WaitGroup
	for range rng.IntN(3) {
		d := time.Duration(rng.IntN(20)) * time.Millisecond
		ctl.Go(func() {
			time.Sleep(d)
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rand.IntN(20))*time.Millisecond)
			defer cancel()
			_ = h.Flush(ctx)
		})
	}
	closeCtx := func() (context.Context, context.CancelFunc) {
		switch rng.IntN(4) {
		case 0:
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		case 1:
			return context.WithTimeout(context.Background(), time.Duration(1+rng.IntN(10))*time.Millisecond)
		default:
			return context.WithTimeout(context.Background(), 300*time.Millisecond)
		}
	}
	time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond)
	ctx1, cancel1 := closeCtx()
	ctx2, cancel2 := closeCtx()
	var err2 error
	ctl.Go(func() { err2 = h.Close(ctx2) })
	closeErr := h.Close(ctx1)
	cancel1()
	stop.Store(true)
	wg.Wait()
	ctl.Wait()
	cancel2()
	if closeErr == nil {
		require.True(t, err2 == nil || errors.Is(err2, context.Canceled) || errors.Is(err2, context.DeadlineExceeded), "second Close: %v", err2)
	}

	close(w.release) // blocked Writes return
	select {
	case <-h.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("seed %d: the workers did not exit within 10 s of Close", seed)
	}
	st := h.Stats()
	res.stats = st
	for f := range faultKinds {
		res.fired[f] = w.counts[f].Load()
	}
	res.fired[replacePanic] = replacePanics.Load()
	res.fired[replaceGoexit] = replaceGoexits.Load()
	res.fired[onErrorPanic] = onErrorPanics.Load()
	res.fired[emptyRecord] = int64(st.Empty)
	if closeErr != nil {
		res.fired[closeCut] = 1
	}
	res.fired[shedBytes] = int64(st.DroppedForBytes)
	require.LessOrEqual(t, st.DroppedForBytes, st.Dropped, "seed %d: %+v", seed, st)
	if opts.MaxQueuedBytes <= 0 || largeOdds == 0 {
		require.Zero(t, st.DroppedForBytes, "seed %d: shed for bytes without a bound in reach: %+v", seed, st)
	}
	require.Equal(t, uint64(handled.Load()), st.Written+st.Dropped+st.Errors+st.Abandoned+st.Empty,
		"seed %d: handled %d, stats %+v", seed, handled.Load(), st)
	if closeErr == nil {
		require.Zero(t, st.Abandoned, "seed %d: Close returned nil", seed)
	}
	// The writer writes a Write whole or not at all, so the records it
	// received are exactly those counted in Written, each once.
	id := regexp.MustCompile(`"id":(\d+)`)
	if format == "text" {
		id = regexp.MustCompile(`(?:^| |\.)id=(\d+)`)
	}
	w.mu.Lock()
	ids := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(w.out.Bytes()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if format != "text" {
			require.True(t, json.Valid(line), "seed %d: a line is not whole: %q", seed, line)
		}
		if bytes.Contains(line, []byte(slogsink.DroppedMessage)) {
			continue
		}
		m := id.FindSubmatch(line)
		require.NotNil(t, m, "seed %d: a line without its id: %q", seed, line)
		require.False(t, ids[string(m[1])], "seed %d: record %s written twice", seed, m[1])
		ids[string(m[1])] = true
	}
	w.mu.Unlock()
	require.Equal(t, st.Written, uint64(len(ids)), "seed %d: the writer received %d records, Written says %d", seed, len(ids), st.Written)
	goleak.VerifyNone(t, before)
	return res
}
