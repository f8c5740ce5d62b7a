package slogsink_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/slogsink"
)

// FuzzMatchesSyncHandler builds records from the fuzz input (levels, every
// attribute kind, nested and empty groups, LogValuers, With chains, a
// ReplaceAttr) and logs them through slogsink and through the synchronous
// Format handler with the same options. With one shard the bytes written
// must be the same; with several, every handler's records must come out
// in its order and the lines must be the same. The seeds in
// testdata/fuzz/FuzzMatchesSyncHandler run in go test:
//
//	go test -run '^$' -fuzz FuzzMatchesSyncHandler -fuzztime 1m ./slogsink/
func FuzzMatchesSyncHandler(f *testing.F) {
	f.Add([]byte("\x00\x01\x02\x10abc\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c"))
	f.Add([]byte("\x05\x01\x00\x02\x01g\x03\x07\x07\x07\x02\x02\x02\x02\x09\x0b\x0b\x0b"))
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzInput{data: data}
		format := slogsink.JSON
		if in.byte()%2 == 1 {
			format = slogsink.Text
		}
		shards := 1 + int(in.byte()%3)
		hopts := &slog.HandlerOptions{Level: slog.LevelDebug - 8, AddSource: in.byte()%4 == 0, ReplaceAttr: replacers[int(in.byte())%len(replacers)]}
		batch := 1 + int(in.byte())
		prog := in.program()

		want := make([]bytes.Buffer, len(prog.handlers)) // each handler's records alone
		for k := range prog.handlers {
			prog.run(prog.build(format(&want[k], hopts), k), k)
		}
		var ordered bytes.Buffer // every record, in program order
		root := format(&ordered, hopts)
		syncs := make([]slog.Handler, len(prog.handlers))
		for k := range prog.handlers {
			syncs[k] = prog.build(root, k)
		}
		prog.runAll(t, syncs)
		var got writes
		h, err := slogsink.New(&got, &slogsink.Options{
			Level: hopts.Level, AddSource: hopts.AddSource, ReplaceAttr: hopts.ReplaceAttr,
			Format: format, Shards: shards, RingCapacity: 4096, BatchSize: batch,
			Logger: quiet,
		})
		require.NoError(t, err)
		built := make([]slog.Handler, len(prog.handlers))
		for k := range prog.handlers {
			built[k] = prog.build(h, k)
		}
		prog.runAll(t, built)
		require.NoError(t, h.Close(context.Background()))
		require.Zero(t, h.Dropped())
		require.Zero(t, h.Errors())

		gotLines := got.lines()
		if shards == 1 {
			var all bytes.Buffer
			for _, p := range got.all {
				all.Write(p)
			}
			require.Equal(t, ordered.String(), all.String(), "one shard: the same bytes in the same order")
			return
		}
		var wantAll []string
		for k := range want {
			lines := splitLines(want[k].String())
			wantAll = append(wantAll, lines...)
			require.True(t, isSubsequence(lines, gotLines), "handler %d: its records out of order or missing", k)
		}
		require.ElementsMatch(t, wantAll, gotLines)
	})
}

// fuzzInput hands out the fuzz bytes, then zeros.
type fuzzInput struct {
	data []byte
	pos  int
}

func (in *fuzzInput) byte() byte {
	if in.pos >= len(in.data) {
		return 0
	}
	b := in.data[in.pos]
	in.pos++
	return b
}

func (in *fuzzInput) more() bool { return in.pos < len(in.data) }

func (in *fuzzInput) string() string {
	n := int(in.byte() % 8)
	var sb strings.Builder
	for range n {
		switch c := in.byte(); c % 8 {
		case 0:
			sb.WriteString("\"=\\ \n")
		case 1:
			sb.WriteString("é€")
		case 2:
			sb.WriteByte(0xff) // invalid UTF-8
		default:
			sb.WriteByte('a' + c%26)
		}
	}
	return sb.String()
}

// fuzzProgram is a set of handlers, each a chain of With calls from the
// root, and the records logged through each, in one global order.
type fuzzProgram struct {
	handlers [][]withOp
	records  []fuzzRecord
}

type withOp struct {
	group string
	attrs []slog.Attr
}

type fuzzRecord struct {
	handler int
	r       slog.Record
}

var at = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func (in *fuzzInput) program() *fuzzProgram {
	p := &fuzzProgram{handlers: [][]withOp{nil}}
	var pcs [1]uintptr
	runtime.Callers(1, pcs[:])
	for n := 0; in.more() && n < 200; n++ {
		switch op := in.byte(); {
		case op < 16 && len(p.handlers) < 8: // a derived handler
			from := p.handlers[int(in.byte())%len(p.handlers)]
			var o withOp
			if op%2 == 0 {
				o.group = in.string()
			} else {
				for range in.byte() % 4 {
					o.attrs = append(o.attrs, in.attr(0))
				}
			}
			p.handlers = append(p.handlers, append(slices.Clip(from), o))
		default:
			level := slog.Level(int(in.byte()%20) - 8)
			r := slog.NewRecord(at.Add(time.Duration(n)*time.Millisecond), level, in.string(), pcs[0])
			for range in.byte() % 8 {
				r.AddAttrs(in.attr(0))
			}
			p.records = append(p.records, fuzzRecord{handler: int(in.byte()) % len(p.handlers), r: r})
		}
	}
	return p
}

func (in *fuzzInput) attr(depth int) slog.Attr {
	key := in.string()
	switch k := in.byte() % 16; k {
	case 0:
		return slog.String(key, in.string())
	case 1:
		return slog.Int64(key, int64(in.byte())-128)
	case 2:
		return slog.Uint64(key, uint64(in.byte())<<56)
	case 3:
		fs := []float64{0, -1.5, math.NaN(), math.Inf(1), 1e300, float64(in.byte()) / 3}
		return slog.Float64(key, fs[int(in.byte())%len(fs)])
	case 4:
		return slog.Bool(key, in.byte()%2 == 0)
	case 5:
		return slog.Duration(key, time.Duration(in.byte())*time.Microsecond)
	case 6:
		return slog.Time(key, at.Add(time.Duration(in.byte())*time.Hour))
	case 7:
		return slog.Any(key, errors.New(in.string()))
	case 8:
		return slog.Any(key, []int{int(in.byte()), 2})
	case 9:
		return slog.Any(key, map[string]int{in.string(): 1})
	case 10, 11:
		if depth >= 2 {
			return slog.Attr{}
		}
		var as []any
		for range in.byte() % 3 {
			as = append(as, in.attr(depth+1))
		}
		return slog.Group(key, as...)
	case 12:
		return slog.Any(key, fuzzValuer{s: in.string(), group: in.byte()%2 == 0})
	case 13:
		return slog.Attr{}
	case 14:
		return slog.Any(key, nil)
	default:
		return slog.Any(key, struct{ A, B int }{int(in.byte()), 3})
	}
}

// fuzzValuer is a LogValuer: a string, or a group holding it.
type fuzzValuer struct {
	s     string
	group bool
}

func (v fuzzValuer) LogValue() slog.Value {
	if v.group {
		return slog.GroupValue(slog.String("v", v.s), slog.Int("n", len(v.s)))
	}
	return slog.StringValue(v.s)
}

// replacers are the ReplaceAttr functions the fuzz target chooses from.
var replacers = []func([]string, slog.Attr) slog.Attr{
	nil,
	func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	},
	func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) > 0 && a.Value.Kind() == slog.KindString {
			a.Value = slog.StringValue(strings.ToUpper(a.Value.String()))
		}
		if a.Key == "a" {
			a.Key = "A"
		}
		return a
	},
	func(_ []string, a slog.Attr) slog.Attr {
		if strings.HasPrefix(a.Key, "b") {
			// The members of a group it returns go through it too.
			return slog.Group("wrapped", slog.Attr{Key: "x" + a.Key, Value: a.Value})
		}
		return a
	},
}

// build applies handler k's chain to root.
func (p *fuzzProgram) build(root slog.Handler, k int) slog.Handler {
	h := root
	for _, o := range p.handlers[k] {
		switch {
		case o.attrs != nil:
			h = h.WithAttrs(o.attrs)
		case o.group != "":
			// As slog.Logger.WithGroup does: slog.Handler's contract says
			// WithGroup("") returns the receiver, which slogsink does and
			// slog's own handlers do not (they open a group named "").
			h = h.WithGroup(o.group)
		}
	}
	return h
}

// run logs handler k's records through h.
func (p *fuzzProgram) run(h slog.Handler, k int) {
	for _, r := range p.records {
		if r.handler == k {
			_ = h.Handle(context.Background(), r.r.Clone())
		}
	}
}

// runAll logs every record through its handler, in program order.
func (p *fuzzProgram) runAll(t *testing.T, hs []slog.Handler) {
	for _, r := range p.records {
		require.NoError(t, hs[r.handler].Handle(context.Background(), r.r.Clone()))
	}
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// isSubsequence reports whether sub appears in all in its order.
func isSubsequence(sub, all []string) bool {
	i := 0
	for _, l := range all {
		if i < len(sub) && l == sub[i] {
			i++
		}
	}
	return i == len(sub)
}
