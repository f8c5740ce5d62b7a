package statstable_test

import (
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/statstable"
	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/sink"
)

// TestEveryFieldOfStatsHasARow is the drift test of the table: every
// counter and gauge of sink.ShardStats (but Shard, an index) is read by a
// row of Rings, and every one of sink.Stats by a row of Rings or Sink, so
// that a new field without a row fails here, not in a dashboard.
func TestEveryFieldOfStatsHasARow(t *testing.T) {
	rings := statstable.Reads(statstable.Rings)
	for _, f := range statstable.FieldsOf(reflect.TypeFor[sink.ShardStats](), "Shard") {
		require.Contains(t, rings, f, "sink.ShardStats.%s has no row in statstable.Rings", f)
	}
	all := statstable.Reads(statstable.Rings, statstable.Sink)
	for _, f := range statstable.FieldsOf(reflect.TypeFor[sink.Stats]()) {
		require.Contains(t, all, f, "sink.Stats.%s has no row in statstable.Rings or statstable.Sink", f)
	}
}

// TestEveryFieldOfLogStatsHasARow is the drift test of Log: every
// counter and gauge of logsink.Stats (slogsink.Stats is the same type) is
// read by a row of Log, but Dropped, the sum of DroppedByLevel, which Log
// reads at each level that the map has a key for. (internal/floor checks
// the builds of internal/, not their tests: this test may import logsink.)
func TestEveryFieldOfLogStatsHasARow(t *testing.T) {
	reads := statstable.Reads(statstable.Log)
	for _, f := range statstable.FieldsOf(reflect.TypeFor[logsink.Stats](), "Dropped") {
		require.Contains(t, reads, f, "logsink.Stats.%s has no row in statstable.Log", f)
	}
	var levels []any
	for _, r := range statstable.Log {
		if r.Field == "DroppedByLevel" {
			levels = append(levels, r.Key)
		}
	}
	require.ElementsMatch(t, []any{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError}, levels,
		"statstable.Log reads DroppedByLevel at every key of logsink.Stats")
}

// TestEachLogRowReadsItsFigure reads every row of Log from a Stats whose
// fields differ: its field, or its level's element of DroppedByLevel (0
// for a level the map lacks). A read allocates nothing.
func TestEachLogRowReadsItsFigure(t *testing.T) {
	st := &logsink.Stats{DroppedByLevel: map[slog.Level]uint64{slog.LevelDebug: 1, slog.LevelInfo: 2, slog.LevelError: 12}}
	v := reflect.ValueOf(st).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.Int:
			f.SetInt(int64(100 + i))
		case reflect.Uint64:
			f.SetUint(uint64(100 + i))
		}
	}
	figs := statstable.MustCompile[logsink.Stats](statstable.Log, false)
	at := statstable.Whole(st)
	for i, r := range statstable.Log {
		var want int64
		if r.Key != nil {
			want = int64(st.DroppedByLevel[r.Key.(slog.Level)])
		} else {
			want = value(v, r.Field)
		}
		require.Equal(t, want, figs[i].Read(at), "%s %v", r.Field, r.Key)
	}
	var sum int64
	require.Zero(t, testing.AllocsPerRun(100, func() {
		for i := range figs {
			sum += figs[i].Read(at)
		}
	}))
	require.NotZero(t, sum)
}

// TestFieldsOfSeesEveryFigure: FieldsOf, which the drift test reads,
// lists integers and durations, not names, slices or an excepted field.
func TestFieldsOfSeesEveryFigure(t *testing.T) {
	fs := statstable.FieldsOf(reflect.TypeFor[sink.Stats](), "Shards")
	require.Contains(t, fs, "Dropped")
	require.Contains(t, fs, "MaxWorkerDelay")
	require.Contains(t, fs, "QueuedBytes")
	require.NotContains(t, fs, "Name")
	require.NotContains(t, fs, "PerShard")
	require.NotContains(t, fs, "Shards")
}

// stats returns a sink.Stats of three shards in which every integer field,
// the shards' too, has a value of its own.
func stats() *sink.Stats {
	n := int64(0)
	fill := func(v reflect.Value) {
		for i := range v.NumField() {
			n += 7
			switch f := v.Field(i); f.Kind() {
			case reflect.Int, reflect.Int64:
				f.SetInt(n)
			case reflect.Uint64:
				f.SetUint(uint64(n))
			}
		}
	}
	st := &sink.Stats{PerShard: make([]sink.ShardStats, 3)}
	fill(reflect.ValueOf(st).Elem())
	for i := range st.PerShard {
		fill(reflect.ValueOf(&st.PerShard[i]).Elem())
	}
	st.Dropped = 1000 // room for its reasons
	for i := range st.PerShard {
		st.PerShard[i].Dropped = 1000 + uint64(i)
	}
	return st
}

// value is the field name of v, an integer.
func value(v reflect.Value, name string) int64 {
	f := v.FieldByName(name)
	if f.CanInt() {
		return f.Int()
	}
	return int64(f.Uint())
}

// TestEachRowReadsItsFigure reads every row from a Stats whose fields
// differ, in total and per shard: a plain row gives its field, the full
// reason Stats.DroppedForSlots (and ShardStats'), the capacity
// RingCapacity per shard and Shards x RingCapacity in total.
func TestEachRowReadsItsFigure(t *testing.T) {
	st := stats()
	rings := statstable.MustCompile[sink.Stats](statstable.Rings, true)
	for i, r := range statstable.Rings {
		f := &rings[i]
		whole := f.Read(statstable.At[sink.Stats]{Stats: st, Shard: -1})
		switch {
		case r.PerRing:
			require.Equal(t, int64(st.Shards*st.RingCapacity), whole, r.Field)
		case len(r.Less) > 0:
			require.Equal(t, int64(st.DroppedForSlots()), whole, r.Field)
		default:
			require.Equal(t, value(reflect.ValueOf(st).Elem(), r.Field), whole, r.Field)
		}
		for s := range st.PerShard {
			got := f.Read(statstable.At[sink.Stats]{Stats: st, Shard: s})
			switch {
			case r.PerRing:
				require.Equal(t, int64(st.RingCapacity), got, r.Field)
			case len(r.Less) > 0:
				require.Equal(t, int64(st.PerShard[s].DroppedForSlots()), got, r.Field)
			default:
				require.Equal(t, value(reflect.ValueOf(&st.PerShard[s]).Elem(), r.Field), got, "%s of shard %d", r.Field, s)
			}
		}
	}
	whole := statstable.MustCompile[sink.Stats](statstable.Sink, false)
	for i, r := range statstable.Sink {
		require.Equal(t, value(reflect.ValueOf(st).Elem(), r.Field), whole[i].Read(statstable.At[sink.Stats]{Stats: st, Shard: -1}), r.Field)
	}
}

// A read allocates nothing: a scrape reads every row of every shard.
func TestAReadAllocatesNothing(t *testing.T) {
	st := stats()
	rings := statstable.MustCompile[sink.Stats](statstable.Rings, true)
	var sum int64
	allocs := testing.AllocsPerRun(100, func() {
		for i := range rings {
			for s := -1; s < len(st.PerShard); s++ {
				sum += rings[i].Read(statstable.At[sink.Stats]{Stats: st, Shard: s})
			}
		}
	})
	require.Zero(t, allocs)
	require.NotZero(t, sum)
}

func TestCompileNamesWhatIsWrong(t *testing.T) {
	for _, c := range []struct {
		row      statstable.Row
		perShard bool
		err      string
	}{
		{statstable.Row{Field: "Nope"}, false, "statstable: sink.Stats has no field Nope"},
		{statstable.Row{Field: "Name"}, false, "statstable: sink.Stats.Name is a string, not an integer"},
		{statstable.Row{Field: "Overloads"}, true, "statstable: sink.ShardStats has no field Overloads"},
		{statstable.Row{Field: "Dropped", Less: []string{"Spilled", "Nope"}}, false, "statstable: sink.Stats has no field Nope"},
		{statstable.Row{Field: "Dropped", Key: slog.LevelInfo}, false,
			"statstable: sink.Stats.Dropped is a uint64, read with a key of type slog.Level: only a map[slog.Level]uint64 is read by key"},
	} {
		_, err := statstable.Compile[sink.Stats]([]statstable.Row{c.row}, c.perShard)
		require.EqualError(t, err, c.err)
	}
	_, err := statstable.Compile[sink.ShardStats](statstable.Rings, true)
	require.EqualError(t, err, "statstable: sink.ShardStats has no PerShard slice of structs")
	require.Panics(t, func() { statstable.MustCompile[sink.Stats]([]statstable.Row{{Field: "Nope"}}, false) })
	_, err = statstable.Compile[logsink.Stats]([]statstable.Row{{Field: "DroppedByLevel", Key: 1}}, false)
	require.EqualError(t, err, "statstable: logsink.Stats.DroppedByLevel is a map[slog.Level]uint64, read with a key of type int: only a map[slog.Level]uint64 is read by key")
}

// TestEveryRowIsWhole: each row has what the modules render.
func TestEveryRowIsWhole(t *testing.T) {
	for _, r := range slices.Concat(statstable.Rings, statstable.Sink, statstable.NATS, statstable.Log, statstable.Slog) {
		require.NotEmpty(t, r.Help, r.Field)
		require.True(t, strings.HasSuffix(r.Help, "."), "%s: the help is a sentence", r.Field)
		require.Contains(t, []statstable.Kind{statstable.Counter, statstable.Gauge}, r.Kind, r.Field)
		require.NotEmpty(t, r.Unit, r.Field)
		require.NotEmpty(t, r.Prom.Metric, r.Field)
		require.True(t, strings.HasPrefix(r.OTel.Metric, "shardedsink."), r.Field)
		require.Equal(t, r.Kind == statstable.Counter, strings.HasSuffix(r.Prom.Metric, "_total"),
			"%s: a Prometheus counter, and only one, ends in _total", r.Prom.Metric)
		require.Empty(t, r.Prom.By, "%s: a promsink series has one label at most", r.Prom.Metric)
		require.Equal(t, r.OTel.By == "", r.OTel.ByValue == "", r.OTel.Metric)
	}
	require.Len(t, statstable.Slog, len(statstable.Log))
	for i, r := range statstable.Log {
		s := statstable.Slog[i]
		require.True(t, strings.HasPrefix(r.Prom.Metric, "log_"), r.Prom.Metric)
		require.True(t, strings.HasPrefix(r.OTel.Metric, "shardedsink.log."), r.OTel.Metric)
		require.Equal(t, "s"+r.Prom.Metric, s.Prom.Metric)
		require.Equal(t, strings.Replace(r.OTel.Metric, ".log.", ".slog.", 1), s.OTel.Metric)
		require.Equal(t, r.Field, s.Field)
	}
}

// TestRowsOfOneMetricAgree: the rows that share a metric, in either
// module, agree on kind and unit and tell themselves apart by one label,
// and Families gives the metric's help, naming each of the label's values;
// Families has no other entry.
func TestRowsOfOneMetricAgree(t *testing.T) {
	used := map[string]bool{}
	for _, table := range [][]statstable.Row{statstable.Rings, statstable.Sink, statstable.NATS, statstable.Log, statstable.Slog} {
		for _, name := range []func(statstable.Row) statstable.Name{
			func(r statstable.Row) statstable.Name { return r.Prom },
			func(r statstable.Row) statstable.Name { return r.OTel },
		} {
			byMetric := map[string][]statstable.Row{}
			var order []string
			for _, r := range table {
				m := name(r).Metric
				if byMetric[m] == nil {
					order = append(order, m)
				}
				byMetric[m] = append(byMetric[m], r)
			}
			for _, m := range order {
				rows := byMetric[m]
				help, family := statstable.Families[m]
				if len(rows) == 1 && name(rows[0]).Label == "" {
					require.False(t, family, "%s is one row's metric; its help is the row's", m)
					continue
				}
				require.True(t, family, "statstable.Families has no help for %s, whose rows share it", m)
				used[m] = true
				label := ""
				values := map[string]bool{}
				for _, r := range rows {
					require.Equal(t, rows[0].Kind, r.Kind, "%s: rows of one metric, one kind", m)
					require.Equal(t, rows[0].Unit, r.Unit, "%s: rows of one metric, one unit", m)
					n := name(r)
					require.False(t, values[n.Value+","+n.ByValue], "%s: two rows of %s=%q %s=%q", m, n.Label, n.Value, n.By, n.ByValue)
					values[n.Value+","+n.ByValue] = true
					if n.Label == "" {
						continue
					}
					if label == "" {
						label = n.Label
					}
					require.Equal(t, label, n.Label, "%s: rows of one metric, one label", m)
					require.Contains(t, help, n.Value+" (", "%s's help does not say what %s=%s means", m, n.Label, n.Value)
				}
			}
		}
	}
	for m := range statstable.Families {
		require.True(t, used[m], "statstable.Families has %s, which no rows share", m)
	}
}

// HelpOf gives a family's help to each of its rows, and a row of its own
// metric its own.
func TestHelpOf(t *testing.T) {
	r := statstable.Rings[0]
	require.Equal(t, r.Help, statstable.HelpOf(r, r.Prom))
	for _, r := range statstable.Rings {
		if r.Prom.Metric == "dropped_total" {
			require.Equal(t, statstable.Families["dropped_total"], statstable.HelpOf(r, r.Prom))
			require.Equal(t, statstable.Families["shardedsink.processed"], statstable.HelpOf(r, r.OTel))
		}
	}
}
