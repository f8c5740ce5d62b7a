package natsprom

import (
	"testing"

	"github.com/stretchr/testify/require"

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
