//go:build !amd64 || race

package machine

import "sync/atomic"

// StoreRelease stores v at addr with (at least) release ordering; see the
// package documentation. On this platform, or under the race detector, it
// is atomic.StoreUint64, so that the race detector sees the edge and
// weakly ordered processors get their release instruction.
func StoreRelease(addr *uint64, v uint64) { atomic.StoreUint64(addr, v) }
