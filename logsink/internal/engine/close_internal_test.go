package engine

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
)

// Close waits for a record that Begin started, however long its
// formatting takes, and writes it; a record begun after Close is refused
// and counted.
func TestCloseWaitsForARecordBegunBeforeIt(t *testing.T) {
	// Read only once Close has returned: the worker's Writes come before.
	var out writeLog
	synctest.Test(t, func(t *testing.T) {
		w, err := New(&out, defaults(Settings{}))
		if err != nil {
			t.Fatal(err)
		}
		s := w.Stream()
		c, ok := s.Begin(slog.LevelInfo)
		if !ok {
			t.Fatal("Begin refused a record into an empty Writer")
		}
		closed := make(chan error, 1)
		go func() { closed <- w.Close(context.Background()) }()
		synctest.Wait() // Close polls for the record in flight, however long
		if len(closed) != 0 {
			t.Fatalf("Close returned (%v) while a record begun before it was in flight", <-closed)
		}
		r := GetRecord()
		r.e.append([]byte("{\"msg\":\"begun before Close\"}\n"))
		s.Push(c, slog.LevelInfo, r)
		s.End()
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		if _, ok := s.Begin(slog.LevelInfo); ok {
			t.Fatal("Begin took a record after Close")
		}
		if !out.contains("begun before Close") {
			t.Fatalf("the record begun before Close is not in the output %q", out.writes)
		}
		if c := w.Counts(); c.Written != 1 || w.Dropped() != 1 {
			t.Fatalf("Counts = %+v, want 1 written and 1 dropped after Close", c)
		}
	})
}
