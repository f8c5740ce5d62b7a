package engine

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkDrainTurn measures one drain turn on its own, the time it holds
// a P: a batch of records of five attributes (about 150 bytes each, as
// slog.NewJSONHandler formats them) copied into Writes of at most 256 KiB to
// a temporary file, at batch sizes around the default.
//
//	go test -run '^$' -bench DrainTurn ./logsink/
func BenchmarkDrainTurn(b *testing.B) {
	var one bytes.Buffer
	slog.New(slog.NewJSONHandler(&one, nil)).With("worker", 1).Info("request served", "route", "/cart", "status", 200, "bytes", 1234, "user", "ann")
	for _, n := range []int{256, 1024, 4096, 16384} {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "log.json"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			w, err := New(f, defaults(Settings{RingCapacity: n, BatchSize: n, Shards: 1}))
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close(context.Background())
			batch := make([]*Record, n)
			for b.Loop() {
				b.StopTimer()
				for k := range batch {
					batch[k] = newRecord(nil, one.Bytes(), 0, false)
				}
				w.shards[0].counts.addQueued(int64(n)) // what the pushes would have added
				b.StartTimer()
				w.drain(context.Background(), batch)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(time.Microsecond), "µs/turn")
		})
	}
}

// writeLog keeps a copy of every Write it is given, and where its bytes
// were.
type writeLog struct {
	writes [][]byte
	at     []*byte
}

func (w *writeLog) Write(p []byte) (int, error) {
	w.writes = append(w.writes, bytes.Clone(p))
	w.at = append(w.at, &p[0])
	return len(p), nil
}

// contains reports whether the Writes hold s.
func (w *writeLog) contains(s string) bool {
	return bytes.Contains(bytes.Join(w.writes, nil), []byte(s))
}

func TestAnOutsizedRecordIsWrittenFromItsOwnBytesAndTheBufferKeepsItsSize(t *testing.T) {
	w := &writeLog{}
	h, err := New(w, defaults(Settings{Shards: 1}))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	small := []byte("{\"msg\":\"small\"}\n")
	huge := append(bytes.Repeat([]byte("x"), 1<<20), '\n')
	batch := []*Record{newRecord(nil, small, 0, false), newRecord(nil, huge, 0, false), newRecord(nil, small, 0, false)}
	hugeBytes := &batch[1].e.big[0]
	st := &h.shards[0]
	st.counts.addQueued(int64(len(batch))) // what the pushes would have added
	h.drain(context.Background(), batch)

	if got := cap(st.out); got != maxWrite {
		t.Errorf("after a record of 1 MiB the shard's Write buffer holds %d bytes, want %d", got, maxWrite)
	}
	if len(w.writes) != 3 {
		t.Fatalf("%d Writes, want 3: the small record, the huge one alone, the small one", len(w.writes))
	}
	if w.at[1] != hugeBytes {
		t.Error("the outsized record was copied instead of written from its own bytes")
	}
	if !bytes.Equal(w.writes[0], small) || !bytes.Equal(w.writes[1], huge) || !bytes.Equal(w.writes[2], small) {
		t.Error("the Writes do not hold the records in order")
	}
	if n := h.Written(); n != 3 {
		t.Errorf("Written = %d, want 3", n)
	}
}
