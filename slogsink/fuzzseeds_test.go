package slogsink_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fuzzSeeds are FuzzMatchesSyncHandler's seeds: each a program written with
// seedWriter, which encodes what the fuzz decoder reads, and the claims its
// name makes, which the seed's run checks (checkSeed). The files in
// testdata/fuzz/FuzzMatchesSyncHandler are these, and nothing else:
// TestFuzzSeedsAreUpToDate fails when they differ, and rewrites them with
//
//	go test ./slogsink/ -run TestFuzzSeedsAreUpToDate -update
var fuzzSeeds = []struct {
	name  string
	build func() []byte
	claim seedClaim
}{
	{"json-one-shard-attr-kinds", func() []byte {
		w := newSeed(false, 1, false, 0, 8)
		w.log(0, 0, "kinds", aString("s", "ab"), aInt("i", -5), aUint("u", 3), aFloat("f", 2), aBool("b"),
			aDuration("d", 9), aTime("t", 4))
		w.log(0, 4, "any", aError("e", "boom"), aSlice("sl", 7), aMap("m", "k"), aGroup("g", aInt("x", 1)),
			aGroup("h"), aValuer("v", "lv", true), aEmpty())
		w.log(0, 8, "more", aNil("n"), aStruct("st", 2), aCellPointer("p", 0), aCellMap("cm", 1),
			aCellValuer("cv", 2), aCellGroup("cg", 0), aValuer("w", "x", false))
		return w.bytes()
	}, seedClaim{shards: 1, handlers: 1, minEach: 3, minKinds: attrCases}},

	{"json-source-groups-replace", func() []byte {
		w := newSeed(false, 1, true, 2, 4)
		w.group(0, "req")                                           // 1
		w.with(1, aString("a", "lower"), aString("b", "bee"))       // 2
		w.group(2, "inner")                                         // 3
		w.group(3, "empty")                                         // 4: logs with no attributes
		w.with(0, aGroup("top", aString("a", "x"), aGroup("none"))) // 5
		for k := range 6 {
			w.log(k, 0, "one", aString("a", "v"), aGroup("sub", aString("s", "q")))
			w.log(k, 4, "two")
		}
		return w.bytes()
	}, seedClaim{shards: 1, handlers: 6, minEach: 2, minDepth: 4, source: true, replace: true, groups: 3}},

	{"json-two-shards-eight-handlers", func() []byte {
		w := newSeed(false, 2, false, 0, 3)
		w.with(0, aString("svc", "cart")) // 1
		w.group(1, "http")                // 2
		w.with(2, aInt("id", 7))          // 3
		w.with(1, aInt("id", 8))          // 4
		w.group(0, "db")                  // 5
		w.with(5, aString("q", "sel"))    // 6
		w.with(3, aBool("ok"))            // 7
		for round := range 3 {
			for k := range 8 {
				w.log(k, round*2, "r", aInt("k", k), aInt("round", round))
			}
		}
		return w.bytes()
	}, seedClaim{shards: 2, handlers: 8, minEach: 3, minDepth: 4}},

	{"text-three-shards-with-chain", func() []byte {
		w := newSeed(true, 3, false, 3, 2)
		w.with(0, aString("req", "a"))                   // 1
		w.group(1, "g")                                  // 2
		w.with(2, aString("b", "wrapped"), aInt("n", 1)) // 3
		w.group(3, "h")                                  // 4
		w.with(4, aValuer("v", "lv", true))              // 5
		for i := range 3 {
			for k := range 6 {
				w.log(k, 4, "chain", aString("s", "x"), aInt("i", i), aString("bb", "y"))
			}
		}
		return w.bytes()
	}, seedClaim{text: true, shards: 3, handlers: 6, minEach: 3, minDepth: 5, replace: true, groups: 2}},

	{"json-mutated-after-with", func() []byte {
		w := newSeed(false, 1, false, 0, 5)
		w.with(0, aCellPointer("p", 0), aCellMap("m", 1), aCellValuer("v", 2)) // 1
		w.log(1, 4, "before")
		w.mutate(0)
		w.mutate(1)
		w.mutate(2)
		w.group(1, "g")                                       // 2: derived after the change
		w.with(2, aCellGroup("cg", 0), aCellPointer("pb", 2)) // 3
		w.log(1, 4, "after")
		w.mutate(0)
		w.mutate(2)
		w.with(3, aString("k", "v")) // 4
		for k := range 5 {
			w.log(k, 4, "each", aCellValuer("now", 0))
			w.log(k, 0, "again")
		}
		return w.bytes()
	}, seedClaim{shards: 1, handlers: 5, minEach: 2, minDepth: 3, mutatedAfter: 5}},

	{"text-two-shards-mutated-after-with-source", func() []byte {
		w := newSeed(true, 2, true, 1, 1)
		w.with(0, aCellPointer("p", 0), aCellGroup("g", 1)) // 1
		w.mutate(0)
		w.mutate(1)
		w.group(1, "grp")           // 2
		w.with(2, aCellMap("m", 0)) // 3
		w.mutate(0)
		w.with(1, aCellValuer("v", 1)) // 4
		w.mutate(1)
		for i := range 3 {
			for k := range 5 {
				w.log(k, 4, "t", aInt("i", i))
			}
		}
		return w.bytes()
	}, seedClaim{text: true, shards: 2, handlers: 5, minEach: 3, minDepth: 3, source: true, replace: true, groups: 1, mutatedAfter: 4}},
}

// seedNames maps each seed's bytes to its name, for the fuzz body.
var seedNames = func() map[string]string {
	m := map[string]string{}
	for _, s := range fuzzSeeds {
		m[string(s.build())] = s.name
	}
	return m
}()

// seedClaim is what a seed's name promises its program exercises.
type seedClaim struct {
	text         bool
	shards       int
	handlers     int  // exactly
	minEach      int  // records logged through every handler, at least
	minDepth     int  // the longest With chain, at least
	source       bool // AddSource, and every line says where
	replace      bool // a ReplaceAttr that is called
	groups       int  // WithGroup calls, at least
	mutatedAfter int  // cell changes after a With that shows the cell, at least
	minKinds     int  // attribute kinds, at least
}

// checkSeed fails the seed named name if its program does not exercise
// what its claim says.
func checkSeed(t *testing.T, name string, s programSummary, replaceCalls int64, lines []string) {
	t.Helper()
	var c seedClaim
	for _, sd := range fuzzSeeds {
		if sd.name == name {
			c = sd.claim
		}
	}
	require.Equal(t, c.text, s.text, "seed %s: the format", name)
	require.Equal(t, c.shards, s.shards, "seed %s: shards", name)
	require.Equal(t, c.handlers, s.handlers, "seed %s: handlers", name)
	require.GreaterOrEqual(t, slices.Min(s.records), max(c.minEach, 2), "seed %s: records on every handler (%v): at least 2, so that the order check runs", name, s.records)
	require.GreaterOrEqual(t, s.depth, c.minDepth, "seed %s: With chain length", name)
	require.Equal(t, c.source, s.source, "seed %s: AddSource", name)
	if c.source {
		for _, l := range lines {
			require.True(t, strings.Contains(l, `"source":{`) || strings.Contains(l, " source="), "seed %s: a line without its source: %s", name, l)
		}
	}
	require.Equal(t, c.replace, s.replacer != 0, "seed %s: ReplaceAttr", name)
	if c.replace {
		require.Positive(t, replaceCalls, "seed %s: ReplaceAttr never called", name)
	}
	require.GreaterOrEqual(t, s.groups, c.groups, "seed %s: WithGroup calls", name)
	require.GreaterOrEqual(t, s.mutatedAfter, c.mutatedAfter, "seed %s: values changed after the Withs that show them", name)
	require.GreaterOrEqual(t, len(s.kinds), c.minKinds, "seed %s: attribute kinds", name)
}

func TestFuzzSeedsAreUpToDate(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzMatchesSyncHandler")
	want := map[string]string{}
	for _, s := range fuzzSeeds {
		want[s.name] = fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s.build())
	}
	if *update {
		require.NoError(t, os.MkdirAll(dir, 0o755))
	}
	files, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, f := range files {
		if _, ok := want[f.Name()]; !ok {
			if *update {
				require.NoError(t, os.Remove(filepath.Join(dir, f.Name())))
				continue
			}
			t.Errorf("%s: a seed that fuzzSeeds does not describe; go test ./slogsink/ -run %s -update removes it", f.Name(), t.Name())
		}
	}
	for name, content := range want {
		path := filepath.Join(dir, name)
		if *update {
			require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Errorf("%s differs from its description in fuzzSeeds; go test ./slogsink/ -run %s -update rewrites it", path, t.Name())
		}
	}
}

// seedWriter writes a fuzz program in the bytes that fuzzInput.program
// decodes: every read of the decoder has its write here.
type seedWriter struct {
	b        []byte
	handlers int
}

func newSeed(text bool, shards int, source bool, replacer, batch int) *seedWriter {
	w := &seedWriter{handlers: 1}
	w.put(map[bool]byte{false: 0, true: 1}[text])
	w.put(byte(shards - 1))
	w.put(map[bool]byte{false: 1, true: 0}[source])
	w.put(byte(replacer))
	w.put(byte(batch - 1))
	return w
}

func (w *seedWriter) bytes() []byte { return w.b }

func (w *seedWriter) put(bs ...byte) { w.b = append(w.b, bs...) }

// str writes s: lowercase letters, and '~', '^' and '!' for the decoder's
// three other pieces (quotes and a newline, two multi-byte runes, a byte of
// invalid UTF-8).
func (w *seedWriter) str(s string) {
	if len(s) > 7 {
		panic("seedWriter: a string of at most 7 pieces: " + s)
	}
	w.put(byte(len(s)))
	for _, r := range s {
		switch {
		case r == '~':
			w.put(0)
		case r == '^':
			w.put(1)
		case r == '!':
			w.put(2)
		case r >= 'a' && r <= 'z':
			w.put(letterByte(byte(r)))
		default:
			panic("seedWriter: no piece for " + string(r))
		}
	}
}

// letterByte returns a byte that the decoder reads as the letter l: one
// whose value mod 8 is at least 3 and mod 26 is l - 'a'.
func letterByte(l byte) byte {
	for c := int(l - 'a'); c < 256; c += 26 {
		if c%8 >= 3 {
			return byte(c)
		}
	}
	panic("not reached")
}

func (w *seedWriter) derive(op byte, from int) {
	if w.handlers >= maxHandlers {
		panic("seedWriter: at most 8 handlers")
	}
	if from >= w.handlers {
		panic("seedWriter: derive from a handler not made yet")
	}
	w.put(op, byte(from))
	w.handlers++
}

// group writes handler from's WithGroup(name) as the next handler.
func (w *seedWriter) group(from int, name string) {
	w.derive(0, from)
	w.str(name)
}

// with writes handler from's WithAttrs(attrs) as the next handler.
func (w *seedWriter) with(from int, attrs ...seedAttr) {
	if len(attrs) > 3 {
		panic("seedWriter: a With of at most 3 attributes")
	}
	w.derive(1, from)
	w.put(byte(len(attrs)))
	for _, a := range attrs {
		a(w)
	}
}

// mutate writes a change of cell's values.
func (w *seedWriter) mutate(cell int) { w.put(opDeriveBelow, byte(cell)) }

// log writes a record at level (-8 to 11) through handler.
func (w *seedWriter) log(handler, level int, msg string, attrs ...seedAttr) {
	if len(attrs) > 7 || handler >= w.handlers {
		panic("seedWriter: a record of at most 7 attributes, through a handler made")
	}
	w.put(opMutateBelow, byte(level+8))
	w.str(msg)
	w.put(byte(len(attrs)))
	for _, a := range attrs {
		a(w)
	}
	w.put(byte(handler))
}

// seedAttr writes one attribute: its key, its kind, its value.
type seedAttr func(w *seedWriter)

func kind(key string, k byte, value ...byte) seedAttr {
	return func(w *seedWriter) {
		w.str(key)
		w.put(k)
		w.put(value...)
	}
}

func aString(key, v string) seedAttr {
	return func(w *seedWriter) { kind(key, 0)(w); w.str(v) }
}
func aInt(key string, v int) seedAttr         { return kind(key, 1, byte(v+128)) }
func aUint(key string, top byte) seedAttr     { return kind(key, 2, top) }
func aFloat(key string, which byte) seedAttr  { return kind(key, 3, 7, which) }
func aBool(key string) seedAttr               { return kind(key, 4, 0) }
func aDuration(key string, us byte) seedAttr  { return kind(key, 5, us) }
func aTime(key string, hours byte) seedAttr   { return kind(key, 6, hours) }
func aSlice(key string, v byte) seedAttr      { return kind(key, 8, v) }
func aStruct(key string, a byte) seedAttr     { return kind(key, 15, a) }
func aEmpty() seedAttr                        { return kind("", 13) }
func aNil(key string) seedAttr                { return kind(key, 14) }
func aCellPointer(key string, c int) seedAttr { return kind(key, 16, byte(c)) }
func aCellMap(key string, c int) seedAttr     { return kind(key, 17, byte(c)) }
func aCellValuer(key string, c int) seedAttr  { return kind(key, 18, byte(c)) }
func aCellGroup(key string, c int) seedAttr   { return kind(key, 19, byte(c)) }

func aError(key, msg string) seedAttr {
	return func(w *seedWriter) { kind(key, 7)(w); w.str(msg) }
}

func aMap(key, k string) seedAttr {
	return func(w *seedWriter) { kind(key, 9)(w); w.str(k) }
}

func aGroup(key string, members ...seedAttr) seedAttr {
	if len(members) > 2 {
		panic("seedWriter: a group of at most 2 members")
	}
	return func(w *seedWriter) {
		kind(key, 10, byte(len(members)))(w)
		for _, m := range members {
			m(w)
		}
	}
}

func aValuer(key, s string, group bool) seedAttr {
	return func(w *seedWriter) {
		kind(key, 12)(w)
		w.str(s)
		w.put(map[bool]byte{true: 0, false: 1}[group])
	}
}
