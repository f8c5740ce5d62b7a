package natsprom

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/statstable"
	"github.com/shardedsink/shardedsink/natssink"
	"github.com/shardedsink/shardedsink/promsink/internal/series"
	"github.com/shardedsink/shardedsink/promsink/internal/seriestest"
)

// TestThePackageDocListsEverySeries keeps doc.go and the table in step;
// the ring series are promsink's, and its doc lists them.
func TestThePackageDocListsEverySeries(t *testing.T) {
	names, values := series.Families(natsSeries)
	rn, _ := series.Families(series.RingSeries)
	seriestest.CheckDoc(t, "doc.go", names, values, rn)
}

func TestTheTableCompiles(t *testing.T) {
	require.NotPanics(t, func() { series.Compile(natsSeries, "x", 0) })
}

// TestEveryFieldOfNATSStatsHasARow is the drift test of statstable.NATS,
// here because the core module, where the table is, cannot import
// natssink: every counter and gauge of natssink.Stats has a row, but
// Dropped, WaitedOut and Recovered, the rings' own (Rings.Dropped,
// Rings.WaitedOut, Rings.Recovered), which the ring series export.
func TestEveryFieldOfNATSStatsHasARow(t *testing.T) {
	reads := statstable.Reads(statstable.NATS)
	for _, f := range statstable.FieldsOf(reflect.TypeFor[natssink.Stats](), "Dropped", "WaitedOut", "Recovered") {
		require.Contains(t, reads, f, "natssink.Stats.%s has no row in statstable.NATS", f)
	}
	_, err := statstable.Compile[natssink.Stats](statstable.NATS, false)
	require.NoError(t, err)
}
