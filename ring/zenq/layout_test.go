//go:build zenq

package zenq

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/layout"
)

func TestCountHasABlockOfItsOwn(t *testing.T) {
	var r Ring[[3]int]
	count := unsafe.Offsetof(r.count)
	require.Zero(t, count%layout.CacheLine, "count starts a block")
	require.LessOrEqual(t, unsafe.Offsetof(r.capacity)+unsafe.Sizeof(r.capacity), count, "the read-only fields come before count")
	require.GreaterOrEqual(t, unsafe.Offsetof(r.popMu), count+layout.CacheLine, "the pop lock is off count's block")
}
