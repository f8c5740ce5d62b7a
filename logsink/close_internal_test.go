package logsink

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"
)

// Close waits for a record that Begin started, however long its
// formatting takes, and writes it; a record begun after Close is refused
// and counted.
func TestCloseWaitsForARecordBegunBeforeIt(t *testing.T) {
	// Read only once Close has returned: the worker's Writes come before.
	var out writeLog
	w, err := New(&out, nil)
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
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a record begun before it was in flight", err)
	case <-time.After(50 * time.Millisecond):
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
	if all := bytes.Join(out.writes, nil); !bytes.Contains(all, []byte("begun before Close")) {
		t.Fatalf("the record begun before Close is not in the output %q", all)
	}
	if st := w.Stats(); st.Written != 1 || st.Dropped != 1 {
		t.Fatalf("Stats = %+v, want 1 written and 1 dropped after Close", st)
	}
}
