package slogsink_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/slogsink"
)

// FuzzMatchesSyncHandler decodes a program from the fuzz input (levels,
// every attribute kind, nested and empty groups, LogValuers, a tree of With
// calls, values changed after the Withs that hold them, a ReplaceAttr,
// AddSource) and runs it through slogsink and through the synchronous
// Format handler with the same options. With one shard the bytes written
// must be the same; with several, the lines must be the same and every
// handler's records must come out in its order. The seeds in
// testdata/fuzz/FuzzMatchesSyncHandler are written from fuzzSeeds (see
// TestFuzzSeedsAreUpToDate), and their run checks that each exercises what
// its name says:
//
//	go test -run '^$' -fuzz FuzzMatchesSyncHandler -fuzztime 1m ./slogsink/
func FuzzMatchesSyncHandler(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		var sum programSummary
		var replaced atomic.Int64
		run := func(root func(hopts *slog.HandlerOptions) slog.Handler) {
			in := &fuzzInput{data: data}
			p := in.program(&fuzzCells{})
			sum = p.summary
			hopts := p.hopts(&replaced)
			p.run(t, root(hopts))
		}

		var ordered bytes.Buffer // every record, in program order
		run(func(hopts *slog.HandlerOptions) slog.Handler { return sum.format(&ordered, hopts) })
		var got writes
		var h *slogsink.Handler
		run(func(hopts *slog.HandlerOptions) slog.Handler {
			var err error
			h, err = slogsink.New(&got, &slogsink.Options{
				Level:       hopts.Level,
				AddSource:   hopts.AddSource,
				ReplaceAttr: hopts.ReplaceAttr,
				Format:      sum.format,
				Buffering:   logsink.Buffering{Shards: sum.shards, RingCapacity: 4096, BatchSize: sum.batch},
				Logger:      quiet,
			})
			require.NoError(t, err)
			return h
		})
		require.NoError(t, h.Close(context.Background()))
		st := h.Stats()
		require.Zero(t, st.Dropped)
		require.Zero(t, st.Errors)
		require.Equal(t, uint64(len(sum.byHandler)), st.Written)

		wantLines := splitLines(ordered.String())
		require.Len(t, wantLines, len(sum.byHandler), "the synchronous handler writes one line per record")
		gotLines := got.lines()
		if name, ok := seedNames[string(data)]; ok {
			checkSeed(t, name, sum, replaced.Load(), gotLines)
		}
		if sum.shards == 1 {
			var all bytes.Buffer
			for _, p := range got.all {
				all.Write(p)
			}
			require.Equal(t, ordered.String(), all.String(), "one shard: the same bytes in the same order")
			return
		}
		require.ElementsMatch(t, wantLines, gotLines)
		for k := range sum.handlers {
			var mine []string
			for i, l := range wantLines {
				if sum.byHandler[i] == k {
					mine = append(mine, l)
				}
			}
			require.True(t, isSubsequence(mine, gotLines), "handler %d: its records out of order or missing", k)
		}
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

// string reads a length (byte % 8) and that many characters: byte % 8 of
// 0, 1 and 2 are quotes, backslash and newline; two runes of more than one
// byte; and a byte of invalid UTF-8; any other is 'a' + byte % 26.
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

// The program's opcodes, one byte each: a derived handler (an even op a
// WithGroup, an odd one a WithAttrs), a change of a cell's values, or a
// record (any other byte).
const (
	opDeriveBelow = 16 // ops below it derive (while fewer than maxHandlers)
	opMutateBelow = 24 // ops from opDeriveBelow up to it change a cell
	maxHandlers   = 8
	maxEvents     = 200
	cellCount     = 3
)

// fuzzProgram is the header's options and a sequence of events: handlers
// derived from handlers made before, cells changed, records logged.
type fuzzProgram struct {
	text     bool
	source   bool
	replacer int
	events   []fuzzEvent
	summary  programSummary
}

type fuzzEvent struct {
	derive  bool
	from    int
	op      withOp
	mutate  *fuzzCell
	handler int
	r       slog.Record
}

type withOp struct {
	group string
	attrs []slog.Attr
}

// programSummary is what a program exercises, for the seeds' claims, and
// the options the run needs.
type programSummary struct {
	text          bool
	shards, batch int
	source        bool
	replacer      int
	handlers      int
	depth         int   // the longest With chain
	records       []int // per handler
	byHandler     []int // the handler of each record, in order
	groups        int   // WithGroup calls
	cellAttrs     int   // attributes that show a cell's values
	mutatedAfter  int   // cell changes after a With that holds that cell
	kinds         map[int]bool
}

func (s programSummary) format(w io.Writer, o *slog.HandlerOptions) slog.Handler {
	if s.text {
		return slogsink.Text(w, o)
	}
	return slogsink.JSON(w, o)
}

var at = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// program decodes the input: the header (format, shards, AddSource,
// ReplaceAttr, batch size), then the events. Its attributes that show cell
// values read cells, so that two decodings over two sets of cells run the
// same program on separate values.
func (in *fuzzInput) program(cells *fuzzCells) *fuzzProgram {
	p := &fuzzProgram{}
	s := &p.summary
	p.text = in.byte()%2 == 1
	s.text = p.text
	s.shards = 1 + int(in.byte()%3)
	p.source = in.byte()%4 == 0
	s.source = p.source
	p.replacer = int(in.byte()) % len(replacers)
	s.replacer = p.replacer
	s.batch = 1 + int(in.byte())
	s.handlers = 1
	s.records = []int{0}
	s.kinds = map[int]bool{}
	depth := []int{0}
	holds := []map[*fuzzCell]bool{{}} // the cells each handler's Withs hold
	var pcs [1]uintptr
	runtime.Callers(1, pcs[:])
	for n := 0; in.more() && n < maxEvents; n++ {
		switch op := in.byte(); {
		case op < opDeriveBelow && s.handlers < maxHandlers:
			from := int(in.byte()) % s.handlers
			e := fuzzEvent{derive: true, from: from}
			held := map[*fuzzCell]bool{}
			for c := range holds[from] {
				held[c] = true
			}
			if op%2 == 0 {
				e.op.group = in.string()
				if e.op.group != "" {
					s.groups++
				}
			} else {
				for range in.byte() % 4 {
					e.op.attrs = append(e.op.attrs, in.attr(0, cells, s, held))
				}
			}
			p.events = append(p.events, e)
			depth = append(depth, depth[from]+1)
			s.depth = max(s.depth, depth[from]+1)
			holds = append(holds, held)
			s.handlers++
			s.records = append(s.records, 0)
		case op < opMutateBelow:
			c := &cells[int(in.byte())%cellCount]
			for _, held := range holds {
				if held[c] {
					s.mutatedAfter++
					break
				}
			}
			p.events = append(p.events, fuzzEvent{mutate: c})
		default:
			level := slog.Level(int(in.byte()%20) - 8)
			r := slog.NewRecord(at.Add(time.Duration(n)*time.Millisecond), level, in.string(), pcs[0])
			for range in.byte() % 8 {
				r.AddAttrs(in.attr(0, cells, s, nil))
			}
			k := int(in.byte()) % s.handlers
			p.events = append(p.events, fuzzEvent{handler: k, r: r})
			s.records[k]++
			s.byHandler = append(s.byHandler, k)
		}
	}
	return p
}

// attrKinds is the number of attribute kinds attr decodes; attrCases is
// the number of different ones (10 and 11 are both a group).
const attrKinds, attrCases = 20, 19

// attr decodes one attribute: a key, a kind (byte % attrKinds), its value.
// held, when not nil, collects the cells the attribute shows.
func (in *fuzzInput) attr(depth int, cells *fuzzCells, s *programSummary, held map[*fuzzCell]bool) slog.Attr {
	key := in.string()
	k := int(in.byte() % attrKinds)
	s.kinds[min(k, 10)+max(k-11, 0)] = true // 10 and 11 are one case
	cell := func() *fuzzCell {
		c := &cells[int(in.byte())%cellCount]
		s.cellAttrs++
		if held != nil {
			held[c] = true
		}
		return c
	}
	switch k {
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
			as = append(as, in.attr(depth+1, cells, s, held))
		}
		return slog.Group(key, as...)
	case 12:
		return slog.Any(key, fuzzValuer{s: in.string(), group: in.byte()%2 == 0})
	case 13:
		return slog.Attr{}
	case 14:
		return slog.Any(key, nil)
	case 15:
		return slog.Any(key, struct{ A, B int }{int(in.byte()), 3})
	case 16:
		return slog.Any(key, &cell().pub) // a pointer: marshalled when formatted
	case 17:
		return slog.Any(key, cell().m) // a map: likewise
	case 18:
		return slog.Any(key, cellValuer{c: cell()}) // resolved when formatted
	default:
		return slog.Any(key, cellValuer{c: cell(), group: true})
	}
}

// fuzzCell holds values that the program changes after the Withs and
// records that show them.
type fuzzCell struct {
	pub struct {
		N int
		S string
	}
	m map[string]int
}

type fuzzCells [cellCount]fuzzCell

func (c *fuzzCell) change() {
	c.pub.N++
	c.pub.S += "x"
	if c.m == nil {
		c.m = map[string]int{}
	}
	c.m["v"] = c.pub.N
}

// cellValuer is a LogValuer that shows a cell's values at the time it is
// resolved: N, or a group of N and S.
type cellValuer struct {
	c     *fuzzCell
	group bool
}

func (v cellValuer) LogValue() slog.Value {
	if v.group {
		return slog.GroupValue(slog.Int("n", v.c.pub.N), slog.String("s", v.c.pub.S))
	}
	return slog.IntValue(v.c.pub.N)
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

// hopts are the program's handler options; calls counts the ReplaceAttr
// calls.
func (p *fuzzProgram) hopts(calls *atomic.Int64) *slog.HandlerOptions {
	o := &slog.HandlerOptions{Level: slog.LevelDebug - 8, AddSource: p.source}
	if rep := replacers[p.replacer]; rep != nil {
		o.ReplaceAttr = func(groups []string, a slog.Attr) slog.Attr {
			calls.Add(1)
			return rep(groups, a)
		}
	}
	return o
}

// run plays the events on root: each derived handler from the one made
// before it, as a program would, values changed between the calls.
func (p *fuzzProgram) run(t *testing.T, root slog.Handler) {
	hs := []slog.Handler{root}
	for _, e := range p.events {
		switch {
		case e.derive:
			h := hs[e.from]
			switch {
			case e.op.attrs != nil:
				h = h.WithAttrs(e.op.attrs)
			case e.op.group != "":
				// As slog.Logger.WithGroup does: slog.Handler's contract
				// says WithGroup("") returns the receiver, which slogsink
				// does and slog's own handlers do not (they open a group
				// named "").
				h = h.WithGroup(e.op.group)
			}
			hs = append(hs, h)
		case e.mutate != nil:
			e.mutate.change()
		default:
			require.NoError(t, hs[e.handler].Handle(context.Background(), e.r.Clone()))
		}
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
