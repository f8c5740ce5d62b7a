package logsink_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/shardedsink/shardedsink/logsink"
)

// BenchmarkWriteWithRoom is the push of a record that finds room, at INFO
// (never waits) and WARN (may wait, Options.KeepWait): the path that
// KeepWait must leave as it was. Run it against the commit before
// KeepWait (benchstat) to see that it does.
//
//	go test -run '^$' -bench WriteWithRoom -count 10 ./logsink/
func BenchmarkWriteWithRoom(b *testing.B) {
	rec := []byte(`{"time":"2026-12-02T03:04:05.123456789Z","level":"INFO","msg":"request served","route":"/cart","status":200}` + "\n")
	for _, l := range []slog.Level{slog.LevelInfo, slog.LevelWarn} {
		b.Run("level="+l.String(), func(b *testing.B) {
			w, err := logsink.New(io.Discard, &logsink.Options{Buffering: logsink.Buffering{RingCapacity: 1 << 16}})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				s := w.Stream()
				for pb.Next() {
					_, _ = s.WriteLevel(l, rec)
				}
			})
			b.StopTimer()
			if err := w.Close(context.Background()); err != nil {
				b.Fatal(err)
			}
			if st := w.Stats(); st.Dropped != 0 {
				b.Logf("dropped %d of %d (the drain fell behind: not the path measured)", st.Dropped, b.N)
			}
		})
	}
}
