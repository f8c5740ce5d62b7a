package otelmetric

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/shardedsink/shardedsink/internal/statstable"
	"github.com/shardedsink/shardedsink/otelmetric/internal/instruments"
	"github.com/shardedsink/shardedsink/otelmetric/internal/instrumentstest"
)

// TestThePackageDocListsEveryInstrument keeps doc.go and the tables in
// step: every instrument and attribute of the ring, sink and handler
// tables is in the package doc, and the doc names no other.
func TestThePackageDocListsEveryInstrument(t *testing.T) {
	rn, ra := instruments.Names(instruments.RingRows)
	sn, sa := instruments.Names(instruments.SinkRows)
	hn, ha := instruments.Names(handlerRows)
	wn, wa := instruments.Names(writerRows)
	instrumentstest.CheckDoc(t, "doc.go", slices.Concat(rn, sn, hn, wn), slices.Concat(ra, sa, ha, wa), nil)
}

// TestEveryTableIsConsistent: rows of one name agree (New refuses them
// where they do not).
func TestEveryTableIsConsistent(t *testing.T) {
	m := noop.NewMeterProvider().Meter("x")
	for _, err := range []error{
		func() error { _, err := instruments.New(m, instruments.RingRows, "x", 3); return err }(),
		func() error { _, err := instruments.New(m, instruments.SinkRows, "x", 0); return err }(),
		func() error { _, err := instruments.New(m, handlerRows, "x", 0); return err }(),
		func() error { _, err := instruments.New(m, writerRows, "x", 0); return err }(),
	} {
		require.NoError(t, err)
	}
	bad := append(slices.Clone(instruments.RingRows), instruments.RingRows[0])
	bad[len(bad)-1].Unit = "By"
	_, err := instruments.New(m, bad, "x", 0)
	require.EqualError(t, err, "otelmetric: rows 0 and 17 of shardedsink.queue.size disagree on unit, description or kind")
}

// TestLevelIsTheTablesAttribute: Level, which a user filters by, is the
// attribute by which statstable.Log splits error.type=queue_full.
func TestLevelIsTheTablesAttribute(t *testing.T) {
	n := 0
	for _, r := range statstable.Log {
		if r.OTel.By != "" {
			require.Equal(t, string(Level), r.OTel.By, r.OTel.ByValue)
			n++
		}
	}
	require.Equal(t, 4, n, "a row per level")
}
