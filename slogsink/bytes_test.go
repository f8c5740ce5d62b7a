package slogsink_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/slogsink"
)

// stalledWriter blocks every Write until release is closed, as a full pipe
// or a hung disk does, and then counts the records it is given (the lines
// that are not drop reports) and the drops that the reports say, keeping no
// bytes.
type stalledWriter struct {
	entered chan struct{}
	once    sync.Once
	release chan struct{}

	mu       sync.Mutex
	records  int
	reported uint64
	byLevel  map[string]uint64
	partial  []byte // the end of the last Write, when it cut a line
}

func newStalledWriter() *stalledWriter {
	return &stalledWriter{entered: make(chan struct{}), release: make(chan struct{}), byLevel: map[string]uint64{}}
}

func (w *stalledWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.entered) })
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.partial = append(w.partial, p...)
			break
		}
		l := p[:i]
		if len(w.partial) > 0 {
			l = append(w.partial, l...)
			w.partial = nil
		}
		p = p[i+1:]
		// Only drop reports are decoded: a record's line may be a MiB.
		if len(l) < 512 && bytes.Contains(l, []byte(slogsink.DroppedMessage)) {
			var m struct {
				Dropped uint64            `json:"dropped"`
				ByLevel map[string]uint64 `json:"dropped_by_level"`
			}
			if err := jsonUnmarshal(string(l), map[string]any{"dropped": &m.Dropped, "dropped_by_level": &m.ByLevel}); err != nil {
				return 0, err
			}
			w.reported += m.Dropped
			for k, n := range m.ByLevel {
				w.byLevel[k] += n
			}
			continue
		}
		w.records++
	}
	return n, nil
}

func (w *stalledWriter) counts() (records int, reported uint64, byLevel map[string]uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.records, w.reported, w.byLevel
}

// The flood of issue 30: default options, a Writer that is stalled, eight
// goroutines logging Error records with a large attribute (a request body,
// a stack trace), each through a logger of its own (so both default shards
// fill). Before the byte budget the ring slots alone bounded the records,
// whatever their size: 8,192 records of 64 KiB pinned 584 MiB, of 1 MiB
// 8 GiB. With the default Options.MaxQueuedBytes (64 MiB) the heap in use
// after a GC stays within 96 MiB, and once the writer is released and the
// handler Closed every record is written or dropped, and every drop is
// reported in the stream.
func TestAFloodOfLargeRecordsIsBoundedInBytes(t *testing.T) {
	for _, c := range []struct {
		name        string
		attr, count int // bytes, records per goroutine
		short       int // records per goroutine under -race and -short: twice the budget
	}{
		{"records of 64 KiB", 64 << 10, 4000, 256},
		{"records of 1 MiB", 1 << 20, 100, 16},
	} {
		t.Run(c.name, func(t *testing.T) {
			const goroutines = 8
			count := c.count
			if raceEnabled || testing.Short() {
				count = c.short // the race detector's shadow of each large allocation makes the flood 10x slower
			}
			w := newStalledWriter()
			// KeepWait -1: the ERROR records are shed for bytes at once
			// (waiting, they would count in WaitedOut instead).
			h, err := slogsink.New(w, &slogsink.Options{Buffering: logsink.Buffering{KeepWait: -1}})
			require.NoError(t, err)
			released := false
			t.Cleanup(func() {
				if !released {
					close(w.release)
					_ = h.Close(context.Background())
				}
			})
			body := strings.Repeat("x", c.attr)
			var wg sync.WaitGroup
			for g := range goroutines {
				lg := slog.New(h).With("g", g)
				wg.Go(func() {
					for i := range count {
						lg.Error("request failed", "i", i, "body", body)
					}
				})
			}
			wg.Wait()
			<-w.entered

			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			st := h.Stats()
			t.Logf("%d records of %d KiB, writer stalled: heap in use %.1f MiB after GC, %d dropped (%d for bytes)",
				goroutines*count, c.attr>>10, float64(ms.HeapInuse)/(1<<20), st.Dropped, st.DroppedForBytes)
			require.LessOrEqual(t, ms.HeapInuse, uint64(96<<20), "heap in use after GC, writer stalled: %.1f MiB", float64(ms.HeapInuse)/(1<<20))
			require.Positive(t, st.DroppedForBytes, "the flood is over the byte budget: %+v", st)

			close(w.release)
			released = true
			require.NoError(t, h.Close(bounded(t, time.Minute)))
			<-h.Done()
			st = h.Stats()
			handled := uint64(goroutines * count)
			require.Equal(t, handled, st.Written+st.Dropped+st.Errors+st.Abandoned+st.Empty, "stats %+v", st)
			require.Equal(t, handled, st.Written+st.Dropped, "nothing failed: %+v", st)
			records, reported, byLevel := w.counts()
			require.Equal(t, st.Written, uint64(records))
			require.Equal(t, st.Dropped, reported, "every drop is reported in the stream")
			require.Equal(t, map[string]uint64{"ERROR": st.Dropped}, byLevel)
		})
	}
}

// stallFirst logs one small record through lg and waits until the worker is
// in its Write: from then on the shard holds what is logged.
func stallFirst(t *testing.T, w *stalledWriter, lg *slog.Logger) {
	t.Helper()
	lg.Info("taken by the worker")
	select {
	case <-w.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the worker did not start its Write")
	}
}

// KeepLevel's reserve holds in bytes as in slots: a flood of large INFO
// records into a stalled writer fills seven eighths of the shard's share
// of MaxQueuedBytes and is shed from there on, so that large WARN records
// still find room in the last eighth.
func TestTheKeepLevelReserveHoldsInBytes(t *testing.T) {
	const (
		budget = 1 << 20 // one shard: its share
		attr   = 16 << 10
		// A record of a 16 KiB attribute and its JSON takes an 18 KiB
		// allocation (the size class): the reserve of 128 KiB has room
		// for 7, and what the INFO records leave of the 896 KiB for some.
		warnings = 7
	)
	w := newStalledWriter()
	h, err := slogsink.New(w, &slogsink.Options{Buffering: logsink.Buffering{Shards: 1, MaxQueuedBytes: budget}})
	require.NoError(t, err)
	lg := slog.New(h)
	stallFirst(t, w, lg)
	body := strings.Repeat("i", attr)
	for i := range 200 {
		lg.Info("routine", "i", i, "body", body)
	}
	st := h.Stats()
	require.Positive(t, st.DroppedByLevel[slog.LevelInfo])
	require.Equal(t, st.Dropped, st.DroppedForBytes, "the slots are far from full: %+v", st)
	infoKept := 200 - st.Dropped
	require.LessOrEqual(t, infoKept*18<<10, uint64(budget-budget/8), "INFO records took the reserve: %d kept", infoKept)
	for i := range warnings {
		lg.Warn("important", "i", i, "body", body)
	}
	st = h.Stats()
	require.Zero(t, st.DroppedByLevel[slog.LevelWarn], "a large WARN was shed while large INFO records were: %+v", st)
	for range 100 {
		lg.Warn("important", "body", body)
	}
	require.Positive(t, h.Stats().DroppedByLevel[slog.LevelWarn], "the reserve is bounded too")

	close(w.release)
	require.NoError(t, h.Close(bounded(t, 10*time.Second)))
	final := h.Stats()
	records, reported, byLevel := w.counts()
	require.Equal(t, uint64(1+200+warnings+100), final.Written+final.Dropped)
	require.Equal(t, final.Written, uint64(records))
	require.Equal(t, final.Dropped, reported, "every drop for bytes is reported in the stream")
	require.Equal(t, map[string]uint64{"INFO": final.DroppedByLevel[slog.LevelInfo], "WARN": final.DroppedByLevel[slog.LevelWarn]}, byLevel)
}

// A record that the sink refuses for bytes, carrying the report of earlier
// drops in its slot, gives the report back: the next report counts both.
func TestARecordShedForBytesGivesItsDropReportBack(t *testing.T) {
	w := newStalledWriter()
	// KeepWait -1: the WARN record is shed by the sink at once, not after
	// a wait for bytes.
	h, err := slogsink.New(w, &slogsink.Options{Buffering: logsink.Buffering{Shards: 1, MaxQueuedBytes: 100 << 10, KeepWait: -1}})
	require.NoError(t, err)
	lg := slog.New(h)
	stallFirst(t, w, lg)
	body := strings.Repeat("b", 60<<10) // a 64 KiB allocation
	lg.Info("first", "body", body)      // taken: the shard held no bytes
	lg.Info("second", "body", body)     // past seven eighths: shed below KeepLevel
	lg.Warn("third", "body", body)      // carries the report of the second; past the share: shed by the sink
	st := h.Stats()
	require.Equal(t, uint64(2), st.Dropped, "%+v", st)
	require.Equal(t, uint64(2), st.DroppedForBytes)
	require.Equal(t, map[slog.Level]uint64{slog.LevelInfo: 1, slog.LevelWarn: 1}, st.DroppedByLevel)

	close(w.release)
	require.NoError(t, h.Close(bounded(t, 10*time.Second)))
	records, reported, byLevel := w.counts()
	require.Equal(t, 2, records)
	require.Equal(t, uint64(2), reported, "the report the third record carried was given back")
	require.Equal(t, map[string]uint64{"INFO": 1, "WARN": 1}, byLevel)
}

func TestMaxQueuedBytes(t *testing.T) {
	// flood logs 64 records of 64 KiB and 1,000 small ones into a
	// stalled writer through one shard of 2,048 slots.
	flood := func(t *testing.T, maxQueued int) slogsink.Stats {
		w := newStalledWriter()
		// KeepWait -1: the ERROR records are shed for bytes at once.
		h, err := slogsink.New(w, &slogsink.Options{Buffering: logsink.Buffering{Shards: 1, MaxQueuedBytes: maxQueued, RingCapacity: 2048, KeepWait: -1}})
		require.NoError(t, err)
		lg := slog.New(h)
		stallFirst(t, w, lg)
		body := strings.Repeat("x", 64<<10)
		for i := range 64 {
			lg.Error("large", "i", i, "body", body)
		}
		for i := range 1000 {
			lg.Error("small", "i", i)
		}
		st := h.Stats()
		close(w.release)
		require.NoError(t, h.Close(bounded(t, 10*time.Second)))
		final := h.Stats()
		records, reported, _ := w.counts()
		require.Equal(t, uint64(1+64+1000), final.Written+final.Dropped)
		require.Equal(t, final.Written, uint64(records))
		require.Equal(t, final.Dropped, reported)
		return st
	}
	t.Run("bounds the large records, not the small ones", func(t *testing.T) {
		st := flood(t, 1<<20)
		require.Equal(t, uint64(64-14), st.Dropped, "1 MiB holds 14 records of 72 KiB: %+v", st)
		require.Equal(t, st.Dropped, st.DroppedForBytes)
	})
	t.Run("a negative MaxQueuedBytes turns the bound off", func(t *testing.T) {
		st := flood(t, -1)
		require.Zero(t, st.Dropped, "%+v", st)
	})
	t.Run("a record larger than the share goes in alone", func(t *testing.T) {
		w := newStalledWriter()
		h, err := slogsink.New(w, &slogsink.Options{Buffering: logsink.Buffering{Shards: 1, MaxQueuedBytes: 100 << 10}})
		require.NoError(t, err)
		lg := slog.New(h)
		stallFirst(t, w, lg)
		lg.Info("large", "body", strings.Repeat("x", 200<<10)) // the shard holds no bytes: taken
		lg.Info("large", "body", strings.Repeat("y", 1<<10))   // shed while the large one is held
		lg.Error("small")                                      // fits its slot: takes no bytes, taken
		st := h.Stats()
		require.Equal(t, uint64(1), st.Dropped, "%+v", st)
		require.Equal(t, uint64(1), st.DroppedForBytes)
		close(w.release)
		require.NoError(t, h.Flush(bounded(t, 10*time.Second)))
		lg.Error("small") // carries the drop report
		require.NoError(t, h.Close(bounded(t, 10*time.Second)))
		records, reported, byLevel := w.counts()
		require.Equal(t, 4, records)
		require.Equal(t, uint64(1), reported)
		require.Equal(t, map[string]uint64{"INFO": 1}, byLevel)
		require.Equal(t, uint64(4), h.Written())
	})
	t.Run("drops in slots are not counted for bytes", func(t *testing.T) {
		w := newStalledWriter()
		h, err := slogsink.New(w, &slogsink.Options{Buffering: logsink.Buffering{Shards: 1, RingCapacity: 64}})
		require.NoError(t, err)
		lg := slog.New(h)
		stallFirst(t, w, lg)
		for i := range 200 {
			lg.Info("small", "i", i)
		}
		st := h.Stats()
		require.Equal(t, uint64(200-56), st.Dropped)
		require.Zero(t, st.DroppedForBytes)
		close(w.release)
		require.NoError(t, h.Close(bounded(t, 10*time.Second)))
	})
}

// BenchmarkBytes measures what the byte budget costs the caller: one Info
// on the logger of BenchmarkInfoOnAChain (three With levels, five
// attributes, io.Discard), with the default MaxQueuedBytes and with none
// (-1), for a record that fits its ring slot (about 200 bytes: the budget
// counts 0 bytes for it, but its push still calls SizeOf and adds to the
// shard's byte counter) and one of a 1 KiB attribute, which allocates its
// bytes and is counted. It is not in a *bench_test.go file because
// compare.sh copies those into earlier revisions, which have no
// MaxQueuedBytes:
//
//	go test -run '^$' -bench Bytes -benchtime 200000x -count 10 ./slogsink/
func BenchmarkBytes(b *testing.B) {
	for _, record := range []string{"small", "1KiB"} {
		for _, budget := range []string{"off", "default"} {
			b.Run("record="+record+"/budget="+budget, func(b *testing.B) {
				opts := &slogsink.Options{}
				if budget == "off" {
					opts.MaxQueuedBytes = -1
				}
				h, err := slogsink.New(io.Discard, opts)
				if err != nil {
					b.Fatal(err)
				}
				defer func() {
					if err := h.Close(context.Background()); err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(100*float64(h.Dropped())/float64(b.N), "%dropped")
				}()
				lg := slog.New(h).With("service", "checkout").WithGroup("request").With("id", 42, "route", "/cart")
				body := ""
				if record == "1KiB" {
					body = strings.Repeat("b", 1<<10)
				}
				b.ReportAllocs()
				defer threadCPU(b)()
				for b.Loop() {
					lg.Info("served", "status", 200, "bytes", 1234, "user", "ann", "cached", true, "body", body)
				}
			})
		}
	}
}
