package slogsink_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

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

var faultNames = [faultKinds]string{"ok", "error", "panic", "goexit", "slow", "block"}

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
// handler (ReplaceAttr) and OnError fail at random, with Flush and Close
// at random moments and GOMAXPROCS 1 or 2. After each round it checks that
// every record handled is counted once (Written + Dropped + Errors +
// Abandoned), that Abandoned is zero when Close returned nil, that every
// line written is whole, that no goroutine is left, and it bounds every
// wait. Run it for longer with -soak 5m.
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
	var faults [faultKinds]int64
	var panics, errs, abandoned, closeErrs uint64
	end := time.Now().Add(length)
	for seed := uint64(1); rounds == 0 || time.Now().Before(end); seed++ {
		r := soakRound(t, seed)
		rounds++
		for f := range faults {
			faults[f] += r.faults[f]
		}
		panics += r.stats.Panics
		errs += r.stats.Errors
		abandoned += r.stats.Abandoned
		if r.closeErr != nil {
			closeErrs++
		}
		if t.Failed() {
			t.Fatalf("round %d (seed %d) failed", rounds, seed)
		}
	}
	var fs []string
	for f, n := range faults {
		fs = append(fs, fmt.Sprintf("%s=%d", faultNames[f], n))
	}
	t.Logf("%d rounds in %v; writes %v; recovered panics %d, records lost to errors %d, abandoned %d, Close cut short %d times",
		rounds, length, fs, panics, errs, abandoned, closeErrs)
}

type roundResult struct {
	faults   [faultKinds]int64
	stats    slogsink.Stats
	closeErr error
}

func soakRound(t *testing.T, seed uint64) (res roundResult) {
	rng := rand.New(rand.NewPCG(seed, 1))
	before := goleak.IgnoreCurrent()
	runtime.GOMAXPROCS(1 + rng.IntN(2))

	w := &faultyWriter{release: make(chan struct{})}
	w.seed.Store(seed << 32)
	w.odds = [faultKinds]int{writeOK: 40, writeError: rng.IntN(4), writePanic: rng.IntN(4), writeGoexit: rng.IntN(3), writeSlow: rng.IntN(10), writeBlock: rng.IntN(2)}
	panicOdds := rng.IntN(20) // in 1000 records
	jsonFormat := rng.IntN(4) != 0
	opts := &slogsink.Options{
		Level:        slog.LevelDebug - 4,
		Shards:       1 + rng.IntN(4),
		RingCapacity: 2 + rng.IntN(256),
		BatchSize:    1 + rng.IntN(64),
		Logger:       quiet,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == "boom" {
				switch a.Value.Int64() {
				case 1:
					panic("injected ReplaceAttr panic")
				case 2:
					runtime.Goexit()
				}
			}
			return a
		},
	}
	if rng.IntN(2) == 0 {
		opts.KeepLevel = slog.Level(rng.IntN(12) - 4)
	}
	if !jsonFormat {
		opts.Format = slogsink.Text
	}
	if rng.IntN(3) == 0 {
		opts.OnError = func(error) {
			if rand.IntN(4) == 0 {
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
				handled.Add(1)
				lg.Log(context.Background(), level, "soak", "i", i, "boom", boom, "pad", i%7)
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
	res.closeErr = h.Close(ctx1)
	cancel1()
	stop.Store(true)
	wg.Wait()
	ctl.Wait()
	cancel2()
	if res.closeErr == nil {
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
	for f := range res.faults {
		res.faults[f] = w.counts[f].Load()
	}
	require.Equal(t, uint64(handled.Load()), st.Written+st.Dropped+st.Errors+st.Abandoned,
		"seed %d: handled %d, stats %+v", seed, handled.Load(), st)
	if res.closeErr == nil {
		require.Zero(t, st.Abandoned, "seed %d: Close returned nil", seed)
	}
	if jsonFormat {
		w.mu.Lock()
		sc := bufio.NewScanner(bytes.NewReader(w.out.Bytes()))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			require.True(t, json.Valid(sc.Bytes()), "seed %d: a line is not whole: %q", seed, sc.Text())
		}
		w.mu.Unlock()
	}
	goleak.VerifyNone(t, before)
	return res
}
