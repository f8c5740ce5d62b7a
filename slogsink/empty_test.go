package slogsink_test

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/slogsink"
)

// sampler is a Format handler that writes every nth record and no bytes
// for the others (n = 0: none at all).
type sampler struct {
	slog.Handler
	n    int64
	seen *atomic.Int64
}

func (s sampler) Handle(ctx context.Context, r slog.Record) error {
	if k := s.seen.Add(1); s.n == 0 || k%s.n != 0 {
		return nil
	}
	return s.Handler.Handle(ctx, r)
}

func (s sampler) WithAttrs(as []slog.Attr) slog.Handler {
	return sampler{s.Handler.WithAttrs(as), s.n, s.seen}
}

func (s sampler) WithGroup(g string) slog.Handler {
	return sampler{s.Handler.WithGroup(g), s.n, s.seen}
}

func TestRecordsTheFormatHandlerWritesNothingForAreCountedInEmpty(t *testing.T) {
	for _, every := range []int64{0, 2} {
		t.Run(map[int64]string{0: "it writes nothing", 2: "it writes every other record"}[every], func(t *testing.T) {
			var got writes
			seen := new(atomic.Int64)
			h := newHandler(t, &got, &slogsink.Options{
				Buffering: logsink.Buffering{Shards: 2},
				Format: func(w io.Writer, o *slog.HandlerOptions) slog.Handler {
					return sampler{slog.NewJSONHandler(w, o), every, seen}
				},
			})
			lg := slog.New(h).With("req", 1)
			for i := range 5 {
				lg.Info("sampled", "i", i)
			}
			require.NoError(t, h.Flush(context.Background()))
			st := h.Stats()
			written := uint64(0)
			if every != 0 {
				written = 5 / uint64(every)
			}
			require.Equal(t, written, st.Written, "%+v", st)
			require.Len(t, got.lines(), int(written))
			require.Equal(t, uint64(5), st.Written+st.Dropped+st.Errors+st.Abandoned+st.Empty,
				"every record handled is counted once: %+v", st)
			require.Equal(t, 5-written, st.Empty)
		})
	}
}
