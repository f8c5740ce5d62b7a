package statstable

// Render compiles rows for the Stats type S (see [MustCompile]) and
// returns what render makes of each row with its figure, in the rows'
// order: a module's series or instruments.
func Render[S, R any](rows []Row, perShard bool, render func(Row, *Figure[S]) R) []R {
	figs := MustCompile[S](rows, perShard)
	out := make([]R, len(rows))
	for i, r := range rows {
		out[i] = render(r, &figs[i])
	}
	return out
}

// Layout is how a module reads a sink's rows at each scrape: the rows of
// [Sink] once, and those of [Rings] for each of Shards shards with
// PerShard, or once in total. Shards is the sink's shard count when its
// metrics were made; a Stats with another is refused.
type Layout struct {
	Shards   int
	PerShard bool
}

// Labels is the number of shard labels (attributes) the ring rows carry:
// Shards with PerShard, 0 without.
func (l Layout) Labels() int {
	if l.PerShard {
		return l.Shards
	}
	return 0
}

// Instances is the number of times the ring rows are read in a scrape:
// Shards with PerShard, 1 without.
func (l Layout) Instances() int { return max(l.Labels(), 1) }

// Ring returns where instance in of the ring rows is read in st: shard
// in with PerShard, the whole without.
func Ring[S any](l Layout, st *S, in int) At[S] {
	if l.PerShard {
		return At[S]{Stats: st, Shard: in}
	}
	return At[S]{Stats: st, Shard: -1}
}

// Whole returns where the rows of the sink as a whole are read in st.
func Whole[S any](st *S) At[S] { return At[S]{Stats: st, Shard: -1} }
