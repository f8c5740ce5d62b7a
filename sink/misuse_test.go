package sink_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/sink"
)

// A zero Sink or Handle, and a nil ctx, panic with a message that names the
// mistake (they used to panic with an index out of range, a division by
// zero or a nil pointer dereference).
func TestMisusePanicsNameTheMistake(t *testing.T) {
	var zero sink.Sink[ev]
	var h sink.Handle[ev]
	const unmade = "sink: Sink used without New"
	require.PanicsWithValue(t, unmade, func() { zero.Push(ev{}) })
	require.PanicsWithValue(t, unmade, func() { zero.Handle() })
	require.PanicsWithValue(t, unmade, func() { zero.HandleFor(1) })
	require.PanicsWithValue(t, unmade, func() { _ = zero.Flush(context.Background()) })
	require.PanicsWithValue(t, unmade, func() { _ = zero.Shutdown(context.Background()) })
	require.PanicsWithValue(t, "sink: Handle used without New", func() { h.Push(ev{}) })

	s := newSink(t, testCfg(1, 4, 1), nop[ev]())
	//lint:ignore SA1012 the nil ctx is the point
	require.PanicsWithValue(t, "sink: Flush called with a nil ctx", func() { _ = s.Flush(nil) }) //nolint:staticcheck
	//lint:ignore SA1012 the nil ctx is the point
	require.PanicsWithValue(t, "sink: Shutdown called with a nil ctx", func() { _ = s.Shutdown(nil) }) //nolint:staticcheck
}
