package natsmetric

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/shardedsink/shardedsink/otelmetric/internal/instruments"
	"github.com/shardedsink/shardedsink/otelmetric/internal/instrumentstest"
)

// TestThePackageDocListsEveryInstrument keeps doc.go and the table in
// step; the ring instruments are otelmetric's, and its doc lists them.
func TestThePackageDocListsEveryInstrument(t *testing.T) {
	names, attrs := instruments.Names(natsRows)
	rn, _ := instruments.Names(instruments.RingRows)
	instrumentstest.CheckDoc(t, "doc.go", names, attrs, rn)
}

func TestTheTableIsConsistent(t *testing.T) {
	_, err := instruments.New(noop.NewMeterProvider().Meter("x"), natsRows, "x", 0)
	require.NoError(t, err)
}
