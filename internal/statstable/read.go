package statstable

import (
	"fmt"
	"log/slog"
	"reflect"
	"slices"
)

// At is where a row is read: a Stats (a sink.Stats, a natssink.Stats)
// and one of its shards, the index in its PerShard, or -1 for the whole.
// The Stats is a pointer so that a read copies nothing; it is only read.
type At[S any] struct {
	Stats *S
	Shard int
}

// Figure is a row compiled for the Stats type S: where its fields are.
type Figure[S any] struct {
	whole []field // Field, then Less, in S
	shard []field // the same in S's PerShard elements; nil when not read per shard
	// perShard is the index of S's PerShard field; shards that of its
	// Shards, for the total of a PerRing row.
	perShard int
	shards   field
	perRing  bool
}

// field is an integer field of a struct, found by its index path, or an
// element of a map[slog.Level]uint64 field.
type field struct {
	index  []int
	signed bool        // Int, not Uint
	key    *slog.Level // the element read, where the field is a map
}

func (f field) get(v reflect.Value) int64 {
	x := v.FieldByIndex(f.index)
	if f.key != nil {
		// Interface of a map copies only its pointer, and indexing the
		// map itself allocates nothing, as reflect's MapIndex would.
		return int64(x.Interface().(map[slog.Level]uint64)[*f.key])
	}
	if f.signed {
		return x.Int()
	}
	return int64(x.Uint())
}

// Read returns the figure at at. A read allocates nothing.
func (f *Figure[S]) Read(at At[S]) int64 {
	v := reflect.ValueOf(at.Stats).Elem()
	fs := f.whole
	if at.Shard >= 0 && !f.perRing {
		v = v.Field(f.perShard).Index(at.Shard)
		fs = f.shard
	}
	n := fs[0].get(v)
	for _, l := range fs[1:] {
		n -= l.get(v)
	}
	if at.Shard < 0 && f.perRing {
		n *= f.shards.get(v)
	}
	return n
}

// Compile returns the figures of rows for the Stats type S, in the rows'
// order. With perShard each is read per shard too: S must have a PerShard
// slice of structs that hold the fields of every row (but the PerRing
// ones, for which S must have Shards). It fails on a field that S (or
// its shards) lacks or that is not an integer, and on a row with a Key
// whose Field is not a map[slog.Level]uint64.
func Compile[S any](rows []Row, perShard bool) ([]Figure[S], error) {
	typ := reflect.TypeFor[S]()
	if typ.Kind() != reflect.Struct {
		return nil, fmt.Errorf("statstable: %v is not a struct", typ)
	}
	var shardType reflect.Type
	var perShardIndex int
	if perShard {
		ps, ok := typ.FieldByName("PerShard")
		if !ok || ps.Type.Kind() != reflect.Slice || ps.Type.Elem().Kind() != reflect.Struct || len(ps.Index) != 1 {
			return nil, fmt.Errorf("statstable: %v has no PerShard slice of structs", typ)
		}
		shardType, perShardIndex = ps.Type.Elem(), ps.Index[0]
	}
	figs := make([]Figure[S], len(rows))
	for i, r := range rows {
		f := &figs[i]
		f.perRing, f.perShard = r.PerRing, perShardIndex
		names := append([]string{r.Field}, r.Less...)
		var err error
		if f.whole, err = fields(typ, names, r.Key); err != nil {
			return nil, err
		}
		switch {
		case perShard && r.PerRing:
			if f.shards, err = lookUp(typ, "Shards"); err != nil {
				return nil, err
			}
		case perShard:
			if f.shard, err = fields(shardType, names, r.Key); err != nil {
				return nil, err
			}
		}
	}
	return figs, nil
}

// MustCompile is Compile for this repository's own tables, which a test
// compiles: it panics with Compile's error.
func MustCompile[S any](rows []Row, perShard bool) []Figure[S] {
	figs, err := Compile[S](rows, perShard)
	if err != nil {
		panic(err)
	}
	return figs
}

// fields looks up names in typ: the first, a map's element where key is
// not nil (see Row.Key), and the others, integers.
func fields(typ reflect.Type, names []string, key any) ([]field, error) {
	fs := make([]field, len(names))
	for i, name := range names {
		var err error
		if i == 0 && key != nil {
			fs[i], err = lookUpKey(typ, name, key)
		} else {
			fs[i], err = lookUp(typ, name)
		}
		if err != nil {
			return nil, err
		}
	}
	return fs, nil
}

// lookUpKey looks up the element key of typ's field name, a
// map[slog.Level]uint64: the one kind of map that a Stats has.
func lookUpKey(typ reflect.Type, name string, key any) (field, error) {
	sf, ok := typ.FieldByName(name)
	if !ok || !sf.IsExported() {
		return field{}, fmt.Errorf("statstable: %v has no field %s", typ, name)
	}
	l, ok := key.(slog.Level)
	if !ok || sf.Type != reflect.TypeFor[map[slog.Level]uint64]() {
		return field{}, fmt.Errorf("statstable: %v.%s is a %v, read with a key of type %T: only a map[slog.Level]uint64 is read by key",
			typ, name, sf.Type, key)
	}
	return field{index: sf.Index, key: &l}, nil
}

func lookUp(typ reflect.Type, name string) (field, error) {
	sf, ok := typ.FieldByName(name)
	if !ok || !sf.IsExported() {
		return field{}, fmt.Errorf("statstable: %v has no field %s", typ, name)
	}
	switch sf.Type.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return field{index: sf.Index, signed: true}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return field{index: sf.Index}, nil
	}
	return field{}, fmt.Errorf("statstable: %v.%s is a %v, not an integer", typ, name, sf.Type)
}

// FieldsOf returns the exported fields of the struct type typ that are
// counters or gauges (integers and time.Durations), but those in except:
// what the tables must read of typ.
func FieldsOf(typ reflect.Type, except ...string) []string {
	var out []string
	for sf := range typ.Fields() {
		switch sf.Type.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			if sf.IsExported() && !slices.Contains(except, sf.Name) {
				out = append(out, sf.Name)
			}
		}
	}
	return out
}

// Reads returns the fields that rows read: each Field and Less, and
// Shards for a PerRing row.
func Reads(rows ...[]Row) []string {
	var out []string
	add := func(name string) {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	for _, rs := range rows {
		for _, r := range rs {
			add(r.Field)
			for _, l := range r.Less {
				add(l)
			}
			if r.PerRing {
				add("Shards")
			}
		}
	}
	return out
}
