//go:build zenq

package zenq

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func TestCountHasABlockOfItsOwn(t *testing.T) {
	var r Ring[[3]int]
	count := unsafe.Offsetof(r.count)
	require.Zero(t, count%cacheBlock, "count starts a block")
	require.LessOrEqual(t, unsafe.Offsetof(r.capacity)+unsafe.Sizeof(r.capacity), count, "the read-only fields come before count")
	require.GreaterOrEqual(t, unsafe.Offsetof(r.popMu), count+cacheBlock, "the pop lock is off count's block")
}
