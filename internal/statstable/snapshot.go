package statstable

import "sync"

// Snapshots holds the Stats values (of type S) that scrapes read a source
// into again, so that a scrape allocates no per-shard slice. A pool, not
// one buffer: two scrapes may run at once. The zero value is ready to
// use.
type Snapshots[S any] struct{ pool sync.Pool }

// statsReader is the allocation-free form of a source's Stats, which
// *sink.Sink and *natssink.Sink have.
type statsReader[S any] interface {
	ReadStats(*S)
}

// Read returns src's Stats: read with src's ReadStats into a pooled value
// when src has it, and otherwise stats(). Give it back with Put.
func (p *Snapshots[S]) Read(src any, stats func() S) *S {
	st, _ := p.pool.Get().(*S)
	if st == nil {
		st = new(S)
	}
	if r, ok := src.(statsReader[S]); ok {
		r.ReadStats(st)
	} else {
		*st = stats()
	}
	return st
}

// Put gives back a value that Read returned; the caller no longer uses it.
func (p *Snapshots[S]) Put(st *S) { p.pool.Put(st) }

// Options are what the modules' Option values set.
type Options struct {
	PerShard bool // the ring rows once per shard, not in total
}

// Apply returns the options that opts (a module's Option values) set.
func Apply[F ~func(*Options)](opts []F) Options {
	var o Options
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	return o
}
