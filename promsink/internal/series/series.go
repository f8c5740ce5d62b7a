// Package series turns a Stats snapshot into Prometheus samples through a
// table of series: the machinery under promsink and promsink/natsprom,
// which render the rows of internal/statstable with it (FromTable), and
// the series of a sink's rings, which both export.
package series

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Namespace is the prefix of every metric name.
const Namespace = "shardedsink"

// Series is one row of a kind's table: one time series (per sink, and per
// shard where asked for) read from a Stats value of type S at scrape time.
// Rows that share a Name form one metric family; they must agree on Help,
// Type and Label, and tell themselves apart by the Label's Value. A new
// field of a sink's, a natssink sink's or a logsink writer's Stats is a row of
// internal/statstable, not here.
type Series[S any] struct {
	Name  string // without the namespace
	Help  string
	Type  prometheus.ValueType // CounterValue or GaugeValue
	Label string               // the label that tells rows of one family apart, or ""
	Value string               // its value in this row
	Read  func(S) float64      // by value: S is a Stats, or a statstable.At that points to one
}

// Table is a kind's rows made ready to emit: one Desc per family and the
// label pairs of every row for each instance (the sink as a whole, or each
// shard), computed once, so that a scrape allocates no label.
type Table[S any] struct {
	rows      []Series[S]
	descs     []*prometheus.Desc   // per row; rows of one family share one
	family    []*prometheus.Desc   // one per family, for Describe
	pairs     [][][]*dto.LabelPair // [instance][row]
	instances int
}

// Compile builds the table of rows for the sink named name; shards > 0
// gives every series a shard label ("0" .. shards-1) and shards instances,
// 0 one instance without it. It panics on a table whose rows of one name
// disagree: the tables are this module's, and a test compiles each.
func Compile[S any](rows []Series[S], name string, shards int) *Table[S] {
	t := &Table[S]{rows: rows, descs: make([]*prometheus.Desc, len(rows)), instances: max(shards, 1)}
	byName := map[string]int{}
	for i, r := range rows {
		if j, ok := byName[r.Name]; ok {
			f := rows[j]
			if f.Help != r.Help || f.Type != r.Type || f.Label != r.Label {
				panic(fmt.Sprintf("promsink: rows %d and %d of %s disagree on help, type or label", j, i, r.Name))
			}
			t.descs[i] = t.descs[j]
			continue
		}
		byName[r.Name] = i
		var variable []string
		if r.Label != "" {
			variable = append(variable, r.Label)
		}
		if shards > 0 {
			variable = append(variable, "shard")
		}
		t.descs[i] = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", r.Name), r.Help,
			variable, prometheus.Labels{"sink": name})
		t.family = append(t.family, t.descs[i])
	}
	t.pairs = make([][][]*dto.LabelPair, t.instances)
	for in := range t.instances {
		t.pairs[in] = make([][]*dto.LabelPair, len(rows))
		for i, r := range rows {
			ps := []*dto.LabelPair{pair("sink", name)}
			if r.Label != "" {
				ps = append(ps, pair(r.Label, r.Value))
			}
			if shards > 0 {
				ps = append(ps, pair("shard", fmt.Sprint(in)))
			}
			slices.SortFunc(ps, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
			t.pairs[in][i] = ps
		}
	}
	return t
}

func pair(name, value string) *dto.LabelPair { return &dto.LabelPair{Name: &name, Value: &value} }

// Describe sends one Desc per family.
func (t *Table[S]) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range t.family {
		ch <- d
	}
}

// First returns the table's first Desc, for an invalid metric.
func (t *Table[S]) First() *prometheus.Desc { return t.family[0] }

// Size is the number of metrics an Emit of every instance appends.
func (t *Table[S]) Size() int { return t.instances * len(t.rows) }

// Emit appends instance in's metrics, read from s.
func (t *Table[S]) Emit(dst []Metric, in int, s S) []Metric {
	for i := range t.rows {
		dst = append(dst, Metric{desc: t.descs[i], pairs: t.pairs[in][i], typ: t.rows[i].Type, v: t.rows[i].Read(s)})
	}
	return dst
}

// Metric is one sample of a scrape. Its label pairs are the table's,
// shared by every scrape as prometheus.NewConstMetric shares its own: the
// registry reads them and changes nothing.
type Metric struct {
	desc  *prometheus.Desc
	pairs []*dto.LabelPair
	typ   prometheus.ValueType
	v     float64
}

// Desc returns the family's descriptor.
func (m *Metric) Desc() *prometheus.Desc { return m.desc }

// Write fills out with the labels and the value.
func (m *Metric) Write(out *dto.Metric) error {
	out.Label = m.pairs
	v := m.v
	switch m.typ {
	case prometheus.CounterValue:
		out.Counter = &dto.Counter{Value: &v}
	default:
		out.Gauge = &dto.Gauge{Value: &v}
	}
	return nil
}

// Send hands ms to ch, one pointer each: the slice is the scrape's one
// allocation for its metrics.
func Send(ch chan<- prometheus.Metric, ms []Metric) {
	for i := range ms {
		ch <- &ms[i]
	}
}

// Families returns the full metric names of rows, each once in table
// order, and the label="value" of every row that has a label: what a
// package doc must list.
func Families[S any](rows []Series[S]) (names, values []string) {
	for _, r := range rows {
		full := Namespace + "_" + r.Name
		if !slices.Contains(names, full) {
			names = append(names, full)
		}
		if r.Label != "" {
			values = append(values, r.Label+`="`+r.Value+`"`)
		}
	}
	return names, values
}
