package sink

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"
)

// With the hand-off on, a healthy Drain call leaves a sleeping spiller
// asleep: only a push that parks (or, with the hand-off off, a Drain call
// that begins) rings it, so a spill tier costs a healthy sink nothing
// per Drain call. With the hand-off off the same call wakes it.
func TestADrainCallWakesTheSpillerOnlyWithTheHandOffOff(t *testing.T) {
	for _, off := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			entered, release := make(chan struct{}), make(chan struct{})
			s, err := New(Config[[]byte]{
				Shards:         1,
				Logger:         slog.New(slog.DiscardHandler),
				DisableHandOff: off,
				Spill:          Spill[[]byte]{Dir: t.TempDir(), MaxBytes: 8 << 20, Codec: BytesCodec{}},
			}, ActionFunc[[]byte](func(context.Context, [][]byte) {
				entered <- struct{}{}
				<-release
			}))
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second) // past spillLinger: the spiller sleeps
			synctest.Wait()
			if s.spill.sleeping.Load() == 0 {
				t.Fatal("the spiller of an idle sink is not asleep")
			}
			s.Push([]byte("x"))
			<-entered
			synctest.Wait()
			if asleep := s.spill.sleeping.Load() != 0; asleep == off {
				t.Fatalf("hand-off off %v: the spiller asleep %v during a young Drain call", off, asleep)
			}
			close(release)
			if err := s.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}
