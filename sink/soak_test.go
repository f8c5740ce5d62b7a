package sink_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/chanring"
	"github.com/shardedsink/shardedsink/ring/mutex"
	"github.com/shardedsink/shardedsink/ring/vyukov"
	"github.com/shardedsink/shardedsink/sink"
)

// soakFor runs TestSoak for a length of time instead of its short default:
//
//	go test -run TestSoak -soak 5m -v ./sink/
var soakFor = flag.Duration("soak", 0, "run TestSoak's fault-injection rounds for this long (0: a short default run)")

// soakDefaultRounds is the number of rounds of a plain go test: each
// combination of backend, overflow policy and GOMAXPROCS twice.
const soakDefaultRounds = 16

// soakCombo is one backend with one overflow policy.
type soakCombo struct {
	name     string
	factory  ring.Factory[int64]
	overflow sink.Overflow
}

var (
	vyukovInt64   ring.Factory[int64] = vyukov.Factory[int64]
	mutexInt64    ring.Factory[int64] = mutex.Factory[int64]
	chanringInt64 ring.Factory[int64] = chanring.Factory[int64]
)

var soakCombos = []soakCombo{
	{"vyukov", vyukovInt64, sink.DropNewest},
	{"vyukov", vyukovInt64, sink.DropOldest},
	{"mutex", mutexInt64, sink.DropNewest},
	{"chanring", chanringInt64, sink.DropNewest},
}

// soakTally is what a run of rounds survived.
type soakTally struct {
	rounds, values                          int
	panics, goexits, overruns, slow         int64
	flushes, endedShutdowns, timedShutdowns int
	resumes, incompleteShutdowns, shutdowns int
	displacedSum, forBytes                  uint64
	bytesRounds                             int
	alone                                   int64 // values over MaxBatchBytes, each drained alone
}

// check fails t unless every fault that the soak injects fired at least
// once in the run: a soak whose faults never fire proves nothing.
func (tl *soakTally) check(t *testing.T) {
	t.Helper()
	for _, f := range []struct {
		name  string
		fired int64
	}{
		{"Drain panics", tl.panics},
		{"Drain Goexits", tl.goexits},
		{"Drains blocking past their ctx", tl.overruns},
		{"slow Drains", tl.slow},
		{"Flushes", int64(tl.flushes)},
		{"Shutdowns with an ended ctx", int64(tl.endedShutdowns)},
		{"Shutdowns with a short timeout", int64(tl.timedShutdowns)},
		{"Shutdowns cut short by their ctx", int64(tl.incompleteShutdowns)},
		{"Shutdowns that resumed one cut short", int64(tl.resumes)},
		{"values displaced (DropOldest)", int64(tl.displacedSum)},
		{"rounds with byte bounds", int64(tl.bytesRounds)},
		{"pushes dropped for bytes (MaxQueuedBytes)", int64(tl.forBytes)},
		{"values over MaxBatchBytes drained alone", tl.alone},
	} {
		if f.fired == 0 {
			t.Errorf("soak: no %s in %d rounds: that fault was not exercised", f.name, tl.rounds)
		}
	}
}

// TestSoak is the sink's fault-injection soak. Each round builds a sink
// with a random shape on one backend and overflow policy, at GOMAXPROCS 1
// or 2, and runs many producers (Handle.Push, Sink.Push and HandleFor) into
// it while its Drain randomly panics, calls runtime.Goexit, blocks past its
// ctx, or is slow, and a controller calls Flush and Shutdown (with ended,
// short and live ctxs) at random moments. Then producers stop, a Shutdown
// with a live ctx must finish the drain, and the round checks the
// accounting exactly:
//
//   - accepted + rejected == attempted (Push's results);
//   - drained + dropped == attempted, with nothing queued, where a value
//     displaced under DropOldest counts as dropped (DropNewest: dropped ==
//     rejected exactly);
//   - drained == delivered + lost to panics and Goexits, DrainPanics ==
//     the number of those calls, and every value Drain saw was accepted
//     and seen once (DropNewest: every accepted value was seen);
//   - in the rounds with byte bounds (SizeOf, MaxQueuedBytes and mostly
//     MaxBatchBytes): DroppedForBytes <= the rejected pushes (0 without a
//     budget), no bytes counted once Shutdown returned nil, and no Drain
//     call of several values over MaxBatchBytes;
//
// and that no goroutine is left (goleak) and nothing hung (every wait has
// a bound, and a watchdog fails the round after a minute). The run fails
// too when one of its faults never fired: each round's first Drain calls
// and controller steps take each fault in turn, and every other round ends
// with a Shutdown that a held Drain call cuts short, so that the last one
// really resumes it.
func TestSoak(t *testing.T) {
	start := time.Now()
	deadline := time.Time{}
	rounds := soakDefaultRounds
	if *soakFor > 0 {
		deadline = start.Add(*soakFor)
		rounds = math.MaxInt
	} else if testing.Short() {
		rounds = len(soakCombos) * 2
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 17))
	var tally soakTally
	for r := 0; r < rounds; r++ {
		if !deadline.IsZero() && time.Now().After(deadline) {
			break
		}
		combo := soakCombos[r%len(soakCombos)]
		procs := 1 + (r/len(soakCombos))%2
		seed := rng.Uint64()
		if !soakRound(t, r, combo, procs, seed, &tally) {
			return
		}
		tally.rounds++
	}
	t.Logf("soak: %d rounds in %v, %d values pushed; faults survived: %d Drain panics, %d Goexits, %d Drains blocking past their ctx, %d slow Drains; %d Flushes, %d Shutdowns (%d with an ended ctx, %d with a short timeout, %d cut short by their ctx, %d resuming one cut short); %d values displaced (DropOldest); %d rounds with byte bounds, %d pushes dropped for bytes, %d values over MaxBatchBytes drained alone",
		tally.rounds, time.Since(start).Round(time.Millisecond), tally.values,
		tally.panics, tally.goexits, tally.overruns, tally.slow,
		tally.flushes, tally.shutdowns, tally.endedShutdowns, tally.timedShutdowns, tally.incompleteShutdowns, tally.resumes,
		tally.displacedSum, tally.bytesRounds, tally.forBytes, tally.alone)
	tally.check(t)
}

// soakSize is the size that a soak value stands for: 0 to 1023 bytes,
// spread by a hash of the value, and 5000 for one value in 61, over any
// MaxBatchBytes a round draws.
func soakSize(v int64) int {
	if v%61 == 0 {
		return 5000
	}
	return int((uint64(v) * 0x9e3779b97f4a7c15) >> 54)
}

// soakAction is the faulty Drain of a round. Its first four calls inject
// each fault in turn (a panic, a Goexit, a block past the ctx, a slow
// call), so that every round exercises each one; later calls draw theirs.
type soakAction struct {
	mu   sync.Mutex
	seen map[int64]bool // every value handed to Drain, delivered or lost
	dup  int64          // a value seen twice (-1: none)

	// With MaxBatchBytes: the calls whose values sum to more than it (a
	// broken promise unless the call has one value), and the values over
	// it, each of which must come alone.
	maxBatchBytes    int
	overBound, alone atomic.Int64
	calls            atomic.Int64

	// stall, when set, is taken by the next Drain call, which then blocks,
	// whatever its ctx, until the controller releases it.
	stall atomic.Pointer[soakStall]

	lost                             atomic.Int64 // values in batches that panicked or called Goexit
	delivered                        atomic.Int64 // values in batches whose Drain returned
	panics, goexits, overruns, slows atomic.Int64
	faultPercent                     uint64
}

// soakStall is one Drain call held by the controller.
type soakStall struct{ entered, release chan struct{} }

func (a *soakAction) Drain(ctx context.Context, batch []int64) {
	if st := a.stall.Swap(nil); st != nil {
		close(st.entered)
		<-st.release
	}
	a.mu.Lock()
	for _, v := range batch {
		if a.seen[v] && a.dup < 0 {
			a.dup = v
		}
		a.seen[v] = true
	}
	a.mu.Unlock()
	if a.maxBatchBytes > 0 {
		sum := 0
		for _, v := range batch {
			sum += soakSize(v)
		}
		switch {
		case len(batch) > 1 && sum > a.maxBatchBytes:
			a.overBound.Add(1)
		case len(batch) == 1 && sum > a.maxBatchBytes:
			a.alone.Add(1)
		}
	}
	// Each call draws its own fate (the first four take theirs in turn);
	// the generator is per call, so no lock.
	roll := rand.Uint64N(100)
	if n := a.calls.Add(1); n <= 4 && a.faultPercent >= 4 {
		roll = (uint64(n)-1)*a.faultPercent/4 + a.faultPercent/8
	}
	switch {
	case roll < a.faultPercent/4:
		a.lost.Add(int64(len(batch)))
		a.panics.Add(1)
		panic("soak: injected Drain panic")
	case roll < a.faultPercent/2:
		a.lost.Add(int64(len(batch)))
		a.goexits.Add(1)
		runtime.Goexit()
	case roll < 3*a.faultPercent/4:
		// Past its ctx: return well after it ends, or after a bound.
		a.overruns.Add(1)
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Millisecond):
		}
		time.Sleep(time.Duration(rand.Uint64N(3)) * time.Millisecond)
	case roll < a.faultPercent:
		a.slows.Add(1)
		time.Sleep(time.Duration(rand.Uint64N(500)) * time.Microsecond)
	}
	a.delivered.Add(int64(len(batch)))
}

// soakProducer is one producer's count.
type soakProducer struct {
	accepted []int64
	rejected int
}

// soakRound runs one round and reports whether the test should go on.
func soakRound(t *testing.T, round int, combo soakCombo, procs int, seed uint64, tally *soakTally) bool {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, uint64(round)))
	runtime.GOMAXPROCS(procs)
	leaks := goleak.IgnoreCurrent()

	cfg := sink.Config[int64]{
		Name:             fmt.Sprintf("soak-%d", round),
		Shards:           1 + rng.IntN(6),
		RingCapacity:     1 << (2 + rng.IntN(7)), // 4 to 256
		BatchSize:        1 + rng.IntN(64),
		Ring:             combo.factory,
		Overflow:         combo.overflow,
		OverloadInterval: time.Millisecond * time.Duration(1+rng.IntN(20)),
		Logger:           quiet,
		DisableStealing:  rng.IntN(3) == 0,
	}
	if rng.IntN(2) == 0 {
		cfg.MaxDelay = time.Duration(rng.IntN(3000)) * time.Microsecond
	}
	if rng.IntN(4) == 0 {
		cfg.Idle = sink.IdlePoll
	}
	if combo.overflow == sink.DropOldest {
		// Small rings, and no hand-off (a push into a full ring would
		// wait for the worker instead), so that displacing is sure to
		// happen.
		cfg.RingCapacity = 1 << (2 + rng.IntN(4)) // 4 to 32
		cfg.DisableHandOff = true
	} else if rng.IntN(2) == 0 {
		cfg.DisableHandOff = true
	}
	// Two rounds in three bound bytes (the schedule covers every combo
	// within the short run): a budget always, a batch bound mostly.
	bytesRound := round%3 != 0
	if bytesRound {
		cfg.SizeOf = func(v int64) int { return soakSize(v) }
		cfg.MaxQueuedBytes = 512 + rng.IntN(32<<10)
		if rng.IntN(3) != 0 {
			cfg.MaxBatchBytes = 256 + rng.IntN(4096)
		}
	}
	// Rounds where the last Shutdown must resume one that its ctx cut
	// short: the controller makes none until the end, then one with an
	// ended ctx while the producers push.
	forceResume := (round+round/4)%2 == 0
	act := &soakAction{seen: map[int64]bool{}, dup: -1, faultPercent: uint64(5 + rng.IntN(30)), maxBatchBytes: cfg.MaxBatchBytes}
	desc := fmt.Sprintf("round %d: %s/%s GOMAXPROCS=%d shards=%d ring=%d batch=%d maxdelay=%v idle=%v stealing=%v faults=%d%% maxqueuedbytes=%d maxbatchbytes=%d seed=%d",
		round, combo.name, combo.overflow, procs, cfg.Shards, cfg.RingCapacity, cfg.BatchSize, cfg.MaxDelay, cfg.Idle, !cfg.DisableStealing, act.faultPercent, cfg.MaxQueuedBytes, cfg.MaxBatchBytes, seed)

	hung := time.AfterFunc(time.Minute, func() {
		buf := make([]byte, 1<<20)
		fmt.Fprintf(os.Stderr, "%s\n%s", desc, buf[:runtime.Stack(buf, true)])
		panic("soak: a round still running after a minute: " + desc)
	})
	defer hung.Stop()

	s, err := sink.New(cfg, act)
	if err != nil {
		t.Fatalf("%s: New: %v", desc, err)
	}

	nProducers := 2 + rng.IntN(14)
	producers := make([]soakProducer, nProducers)
	var stop atomic.Bool
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pr := &producers[p]
			h := s.Handle()
			hf := s.HandleFor(uint64(p))
			for i := int64(0); !stop.Load(); i++ {
				v := int64(p)<<40 | i
				var ok bool
				switch i % 3 {
				case 0:
					ok = h.Push(v)
				case 1:
					ok = s.Push(v)
				default:
					ok = hf.Push(v)
				}
				if ok {
					pr.accepted = append(pr.accepted, v)
				} else {
					pr.rejected++
				}
				if i%64 == 63 {
					runtime.Gosched()
				}
			}
		}()
	}

	// The controller: Flushes and Shutdowns at random moments while the
	// producers run. Its first steps take each kind in turn (a Flush, and
	// but in forceResume rounds a Shutdown with an ended ctx and one with
	// a short timeout), so that every round makes them. cutShort tells
	// whether the last Shutdown returned before it had finished: only
	// then does the final one below resume.
	length := time.Duration(10+rng.IntN(40)) * time.Millisecond
	end := time.Now().Add(length)
	cutShort := false
	for step := 0; step < 3 || time.Now().Before(end); step++ {
		time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
		op := rng.IntN(10)
		switch {
		case step < 3:
			op = [3]int{0, 5, 7}[step]
			if forceResume && step > 0 {
				op = 9
			}
		case forceResume && op >= 5:
			op = 9
		}
		switch {
		case op < 5:
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rng.IntN(5000))*time.Microsecond)
			err := s.Flush(ctx)
			cancel()
			tally.flushes++
			if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, sink.ErrShutdown) {
				t.Fatalf("%s: Flush: %v", desc, err)
			}
		case op < 7:
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			err := s.Shutdown(ctx)
			cutShort = err != nil
			tally.shutdowns++
			tally.endedShutdowns++
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Fatalf("%s: Shutdown with an ended ctx: %v", desc, err)
			}
			if err != nil {
				tally.incompleteShutdowns++
			}
		case op < 9:
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rng.IntN(5000))*time.Microsecond)
			err := s.Shutdown(ctx)
			cancel()
			cutShort = err != nil
			tally.shutdowns++
			tally.timedShutdowns++
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("%s: Shutdown with a short timeout: %v", desc, err)
			}
			if err != nil {
				tally.incompleteShutdowns++
			}
		default:
			// Let the producers run on.
		}
	}
	if forceResume {
		// A Drain call held past its ctx keeps this Shutdown from
		// finishing, whatever the rings hold.
		st := &soakStall{entered: make(chan struct{}), release: make(chan struct{})}
		act.stall.Store(st)
		select {
		case <-st.entered:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no Drain call in 10 s to hold", desc)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := s.Shutdown(ctx)
		close(st.release)
		cutShort = err != nil
		tally.shutdowns++
		tally.endedShutdowns++
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: Shutdown with an ended ctx: %v", desc, err)
		}
		if err == nil {
			t.Fatalf("%s: a Shutdown with an ended ctx returned nil while a Drain call was held", desc)
		}
		tally.incompleteShutdowns++
	}
	if cutShort {
		tally.resumes++ // the last Shutdown below resumes one that its ctx cut short
	}
	stop.Store(true)
	wg.Wait()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	err = s.Shutdown(ctx)
	cancel()
	tally.shutdowns++
	if err != nil {
		t.Fatalf("%s: the last Shutdown, with a live ctx: %v (stats %+v)", desc, err, s.Stats())
	}
	select {
	case <-s.Done():
	default:
		t.Fatalf("%s: Done is open after Shutdown returned nil", desc)
	}

	// The accounting.
	var attempted, rejected uint64
	var accepted []int64
	for i := range producers {
		accepted = append(accepted, producers[i].accepted...)
		rejected += uint64(producers[i].rejected)
		attempted += uint64(len(producers[i].accepted) + producers[i].rejected)
	}
	st := s.Stats()
	fail := func(format string, args ...any) bool {
		t.Errorf("%s: "+format+"\nstats: %+v", append([]any{desc}, append(args, st)...)...)
		return false
	}
	if uint64(len(accepted))+rejected != attempted {
		return fail("accepted %d + rejected %d != attempted %d", len(accepted), rejected, attempted)
	}
	if st.Queued != 0 {
		return fail("%d values queued after Shutdown returned nil", st.Queued)
	}
	if st.Drained+st.Dropped != attempted {
		return fail("drained %d + dropped %d != attempted %d", st.Drained, st.Dropped, attempted)
	}
	if st.Dropped < rejected {
		return fail("dropped %d < rejected %d", st.Dropped, rejected)
	}
	displaced := st.Dropped - rejected
	if combo.overflow == sink.DropNewest && displaced != 0 {
		return fail("dropped %d != rejected %d under DropNewest", st.Dropped, rejected)
	}
	if got := uint64(act.delivered.Load() + act.lost.Load()); got != st.Drained {
		return fail("delivered %d + lost %d != drained %d", act.delivered.Load(), act.lost.Load(), st.Drained)
	}
	if got := uint64(act.panics.Load() + act.goexits.Load()); got != st.DrainPanics {
		return fail("%d panics and Goexits, DrainPanics %d", got, st.DrainPanics)
	}
	if act.dup >= 0 {
		return fail("value %#x handed to Drain twice", act.dup)
	}
	if uint64(len(act.seen)) != st.Drained {
		return fail("Drain saw %d distinct values, drained %d", len(act.seen), st.Drained)
	}
	slices.Sort(accepted)
	for v := range act.seen {
		if _, ok := slices.BinarySearch(accepted, v); !ok {
			return fail("Drain saw %#x, which no push accepted", v)
		}
	}
	if uint64(len(accepted))-displaced != st.Drained {
		return fail("accepted %d - displaced %d != drained %d", len(accepted), displaced, st.Drained)
	}
	if st.DroppedForBytes > st.Dropped-displaced {
		return fail("dropped for bytes %d > rejected %d", st.DroppedForBytes, st.Dropped-displaced)
	}
	if cfg.MaxQueuedBytes == 0 && st.DroppedForBytes != 0 {
		return fail("%d dropped for bytes without MaxQueuedBytes", st.DroppedForBytes)
	}
	for _, ss := range st.PerShard {
		// Per shard: stolen values give their bytes back to their own shard.
		if ss.QueuedBytes != 0 {
			return fail("shard %d: %d bytes still counted after Shutdown returned nil", ss.Shard, ss.QueuedBytes)
		}
	}
	if n := act.overBound.Load(); n != 0 {
		return fail("%d Drain calls of several values summed to more than MaxBatchBytes %d", n, cfg.MaxBatchBytes)
	}
	if err := goleak.Find(leaks); err != nil {
		return fail("goroutines left: %v", err)
	}
	tally.values += int(attempted)
	tally.panics += act.panics.Load()
	tally.goexits += act.goexits.Load()
	tally.overruns += act.overruns.Load()
	tally.slow += act.slows.Load()
	tally.displacedSum += displaced
	tally.forBytes += st.DroppedForBytes
	tally.alone += act.alone.Load()
	if bytesRound {
		tally.bytesRounds++
	}
	return true
}
