package promsink

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/promsink/internal/series"
	"github.com/shardedsink/shardedsink/promsink/internal/seriestest"
)

// TestThePackageDocListsEverySeries keeps doc.go and the tables in step:
// every family and label value of the ring, sink and handler tables is in
// the package doc, and the doc names no series that they lack (but
// natsprom's, which it mentions).
func TestThePackageDocListsEverySeries(t *testing.T) {
	rn, rv := series.Families(series.RingSeries)
	sn, sv := series.Families(series.SinkSeries)
	hn, hv := series.Families(handlerSeries)
	wn, wv := series.Families(writerSeries)
	seriestest.CheckDoc(t, "doc.go", slices.Concat(rn, sn, hn, wn), slices.Concat(rv, sv, hv, wv),
		[]string{"shardedsink_nats_queued_values"})
}

// TestEveryTableCompiles: rows of one family agree (Compile panics where
// they do not), per sink and per shard.
func TestEveryTableCompiles(t *testing.T) {
	require.NotPanics(t, func() {
		series.Compile(series.RingSeries, "x", 0)
		series.Compile(series.RingSeries, "x", 3)
		series.Compile(series.SinkSeries, "x", 0)
		series.Compile(handlerSeries, "x", 0)
		series.Compile(writerSeries, "x", 0)
	})
	bad := append(slices.Clone(series.RingSeries), series.RingSeries[0])
	bad[len(bad)-1].Help = "another help"
	require.PanicsWithValue(t, "promsink: rows 0 and 17 of queued_values disagree on help, type or label",
		func() { series.Compile(bad, "x", 0) })
}
