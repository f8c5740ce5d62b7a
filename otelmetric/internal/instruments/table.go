// Package instruments turns a Stats snapshot into OpenTelemetry
// observations through a table of instruments: the machinery under
// otelmetric and otelmetric/natsmetric, which render the rows of
// internal/statstable with it (FromTable), and the instruments of a
// sink's rings, which both register.
package instruments

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// ScopeName is the instrumentation scope (meter name) of every instrument.
const ScopeName = "github.com/shardedsink/shardedsink/otelmetric"

// SinkName is the attribute that names the sink on every observation.
const SinkName = attribute.Key("shardedsink.sink.name")

// Shard is the attribute of a shard's observations, with WithPerShard.
const Shard = attribute.Key("shardedsink.shard")

// Kind is an instrument's kind.
type Kind int

const (
	Counter       Kind = iota // an Int64ObservableCounter: a count since the sink was made
	UpDownCounter             // an Int64ObservableUpDownCounter: a level (queued, capacity)
)

// Row is one row of a kind's table: one observation (per sink, and per
// shard where asked for) read from a Stats value of type S at collection
// time. Rows that share a Name observe one instrument; they must agree on
// Unit, Desc and Kind, and tell themselves apart by Attrs. A new field of
// a sink's, a natssink sink's or a logsink writer's Stats is a row of
// internal/statstable, not here.
type Row[S any] struct {
	Name, Unit, Desc string
	Kind             Kind
	Attrs            []attribute.KeyValue // beside the sink's name (and shard)
	Read             func(S) int64        // by value: S is a Stats, or a statstable.At that points to one
}

// Table is a kind's rows with their instruments created on one meter and
// the observe options (attribute sets) of every row for each instance,
// made once, so that a collection allocates no attribute.
type Table[S any] struct {
	rows      []Row[S]
	inst      []metric.Int64Observable // per row; rows of one name share one
	unique    []metric.Observable      // one per name, for RegisterCallback
	opts      [][]metric.ObserveOption // [instance][row]
	instances int
}

// New creates the rows' instruments on m for the sink named name; shards
// > 0 gives every observation a shard attribute and shards instances.
func New[S any](m metric.Meter, rows []Row[S], name string, shards int) (*Table[S], error) {
	t := &Table[S]{rows: rows, inst: make([]metric.Int64Observable, len(rows)), instances: max(shards, 1)}
	byName := map[string]int{}
	for i, r := range rows {
		if j, ok := byName[r.Name]; ok {
			f := rows[j]
			if f.Unit != r.Unit || f.Desc != r.Desc || f.Kind != r.Kind {
				return nil, fmt.Errorf("otelmetric: rows %d and %d of %s disagree on unit, description or kind", j, i, r.Name)
			}
			t.inst[i] = t.inst[j]
			continue
		}
		byName[r.Name] = i
		var err error
		switch r.Kind {
		case Counter:
			t.inst[i], err = m.Int64ObservableCounter(r.Name, metric.WithUnit(r.Unit), metric.WithDescription(r.Desc))
		default:
			t.inst[i], err = m.Int64ObservableUpDownCounter(r.Name, metric.WithUnit(r.Unit), metric.WithDescription(r.Desc))
		}
		if err != nil {
			return nil, fmt.Errorf("otelmetric: creating %s: %w", r.Name, err)
		}
		t.unique = append(t.unique, t.inst[i])
	}
	t.opts = make([][]metric.ObserveOption, t.instances)
	for in := range t.instances {
		t.opts[in] = make([]metric.ObserveOption, len(rows))
		for i, r := range rows {
			kvs := append([]attribute.KeyValue{SinkName.String(name)}, r.Attrs...)
			if shards > 0 {
				kvs = append(kvs, Shard.Int(in))
			}
			t.opts[in][i] = metric.WithAttributeSet(attribute.NewSet(kvs...))
		}
	}
	return t, nil
}

// Instruments returns one instrument per name, for RegisterCallback.
func (t *Table[S]) Instruments() []metric.Observable { return t.unique }

// Observe observes instance in's rows, read from s.
func (t *Table[S]) Observe(o metric.Observer, in int, s S) {
	for i := range t.rows {
		o.ObserveInt64(t.inst[i], t.rows[i].Read(s), t.opts[in][i])
	}
}

// Register registers f as the one callback of the given instruments on m.
func Register(m metric.Meter, f func(metric.Observer) error, inst ...[]metric.Observable) (metric.Registration, error) {
	var all []metric.Observable
	for _, is := range inst {
		all = append(all, is...)
	}
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error { return f(o) }, all...)
	if err != nil {
		return nil, fmt.Errorf("otelmetric: registering the callback: %w", err)
	}
	return reg, nil
}

// Names returns the instrument names of rows, each once in table order,
// and the attribute key=value of every row that has attributes: what a
// package doc must list.
func Names[S any](rows []Row[S]) (names, attrs []string) {
	seen := map[string]bool{}
	for _, r := range rows {
		if !seen[r.Name] {
			seen[r.Name] = true
			names = append(names, r.Name)
		}
		for _, kv := range r.Attrs {
			attrs = append(attrs, string(kv.Key)+"="+kv.Value.String())
		}
	}
	return names, attrs
}
