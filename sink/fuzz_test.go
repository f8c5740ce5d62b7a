package sink

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/chanring"
	"github.com/shardedsink/shardedsink/ring/mutex"
	"github.com/shardedsink/shardedsink/ring/vyukov"
)

// fuzzRings are the Ring factories FuzzConfig picks from: nil (the
// default), the three backends, and three that misbehave.
var fuzzRings = []ring.Factory[int]{
	nil,
	vyukov.Factory[int],
	mutex.Factory[int],
	chanring.Factory[int],
	func(int) ring.Ring[int] { return nil },
	func(int) ring.Ring[int] { panic("no rings today") },
	func(c int) ring.Ring[int] { return mutex.New[int](c + 1) },
}

// FuzzConfig builds and runs only sinks of at most fuzzMaxShards shards and
// fuzzMaxSlots slots (shards × ring capacity); a config that is valid but
// larger is settled and checked, not built. The slot bound keeps a fuzzing
// run from allocating gigabytes. The shard bound keeps each input within
// the fuzzing engine's 10 s hang limit: 97 workers with an 81 ns IdleSleep
// and a 68 ns OverloadInterval (an input the fuzzer found) all cycle
// through their timers, and on 2 cores at load average 10 they starved
// Flush for up to 10 s (640 ms at load 5: the config works, slowly).
const (
	fuzzMaxShards = defaultMaxShards
	fuzzMaxSlots  = 1 << 16
)

// FuzzConfig: any Config gives either an error that wraps ErrInvalidConfig
// (and no sink), or a sink that accepts values, drains every accepted one,
// and shuts down. Never a panic, a hang or a lost value. The seeds run in
// every go test; fuzz with
//
//	go test -run '^$' -fuzz FuzzConfig -fuzztime 60s ./sink/
func FuzzConfig(f *testing.F) {
	// name, shards, ringCap, batch, overload, idle, idleSleep, noSteal,
	// victims, items, ringKind, pushes
	f.Add("sink", 0, 0, 0, int64(0), 0, int64(0), false, 0, 0, uint8(0), uint16(100))
	f.Add("events", 4, 16, 4, int64(time.Millisecond), 0, int64(time.Hour), false, 3, 2, uint8(1), uint16(500))
	f.Add("", 1, 1, 1, int64(1), 1, int64(1), true, 0, 0, uint8(2), uint16(50))
	f.Add("poll", 2, 8, 64, int64(time.Hour), 1, int64(time.Hour), false, 0, 0, uint8(3), uint16(300))
	f.Add("neg", -1, -2, -3, int64(-4), 7, int64(-5), false, -6, -7, uint8(0), uint16(1))
	f.Add("big", MaxShards+1, MaxRingCapacity+1, math.MaxInt, int64(math.MaxInt64), 2, int64(math.MaxInt64), false, math.MaxInt, math.MaxInt, uint8(0), uint16(1))
	f.Add("huge-valid", MaxShards, MaxRingCapacity, 0, int64(0), 0, int64(0), false, 0, 0, uint8(1), uint16(0))
	f.Add("nil-ring", 2, 4, 0, int64(0), 0, int64(0), false, 0, 0, uint8(4), uint16(0))
	f.Add("panicking-ring", 2, 4, 0, int64(0), 0, int64(0), false, 0, 0, uint8(5), uint16(0))
	f.Add("wrong-cap", 2, 4, 0, int64(0), 0, int64(0), false, 0, 0, uint8(6), uint16(0))
	f.Add("many-shards", 64, 1, 1, int64(time.Microsecond), 0, int64(0), false, 100, 100, uint8(1), uint16(1000))
	f.Fuzz(func(t *testing.T, name string, shards, ringCap, batch int, overload int64, idle int, idleSleep int64,
		noSteal bool, victims, items int, ringKind uint8, pushes uint16) {
		var mu sync.Mutex
		drained := 0
		action := ActionFunc[int](func(_ context.Context, b []int) {
			mu.Lock()
			drained += len(b)
			mu.Unlock()
		})
		cfg := Config[int]{
			Name: name, Shards: shards, RingCapacity: ringCap, BatchSize: batch,
			Ring:             fuzzRings[int(ringKind)%len(fuzzRings)],
			OverloadInterval: time.Duration(overload),
			Logger:           slog.New(slog.DiscardHandler),
			Idle:             IdleMode(idle), IdleSleep: time.Duration(idleSleep),
			DisableStealing: noSteal,
		}
		st, err := cfg.settle(action)
		if err == nil && victims > 0 && items > 0 {
			st.steal(victims, items, noSteal) // the budgets the benchmarks vary
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("settle: %v does not wrap ErrInvalidConfig", err)
			}
			s, err2 := New(cfg, action)
			if s != nil || !errors.Is(err2, ErrInvalidConfig) {
				t.Fatalf("New on an invalid config: sink %v, error %v", s != nil, err2)
			}
			return
		}
		if st.shards < 1 || st.shards > MaxShards || st.ringCapacity < 1 || st.ringCapacity > MaxRingCapacity ||
			st.batchSize < 1 || st.batchSize > st.ringCapacity || st.overloadInterval <= 0 || st.idleSleep <= 0 ||
			st.stealVictims < 0 || st.stealVictims > st.shards-1 || st.stealItems < 1 || st.stealItems > st.batchSize {
			t.Fatalf("settle gave settings out of range: %+v", st)
		}
		if st.shards > fuzzMaxShards || st.ringCapacity > fuzzMaxSlots/st.shards { // no product: it overflows int on 32-bit platforms
			return
		}
		s, err := buildSettled(st, action)
		if err == nil {
			s.start()
		} else {
			if !errors.Is(err, ErrInvalidConfig) || s != nil {
				t.Fatalf("New: sink %v, error %v that does not wrap ErrInvalidConfig", s != nil, err)
			}
			return
		}
		accepted := 0
		h := s.Handle()
		for i := range int(pushes) {
			var ok bool
			switch i % 3 {
			case 0:
				ok = h.Push(i)
			case 1:
				ok = s.Push(i)
			default:
				ok = s.HandleFor(uint64(i)).Push(i)
			}
			if ok {
				accepted++
			}
		}
		// Under the engine's 10 s hang limit, so that a slow input fails
		// with this test's message.
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
		defer cancel()
		if err := s.Flush(ctx); err != nil {
			t.Fatalf("Flush: %v (settings %#v)", err, st)
		}
		if err := s.Shutdown(ctx); err != nil {
			t.Fatalf("Shutdown: %v (settings %#v)", err, st)
		}
		mu.Lock()
		defer mu.Unlock()
		stats := s.Stats()
		if drained != accepted || int(s.Dropped())+accepted != int(pushes) || stats.Queued != 0 || stats.Drained != uint64(accepted) {
			t.Fatalf("%d pushes, %d accepted, %d drained, %d dropped, stats %+v", pushes, accepted, drained, s.Dropped(), stats)
		}
	})
}
