// Package layout holds what the packages' memory layouts share: the
// padding unit that keeps fields written by different goroutines on cache
// lines of their own, and the marker that makes go vet flag a copy of a
// value that must not be copied.
package layout

// CacheLine is the padding unit between fields that different goroutines
// write: 128 bytes, two 64-byte lines, because Intel's spatial prefetcher
// pulls lines in adjacent pairs (crossbeam's CachePadded pads to 128 on
// x86-64 for the same reason), and 128 is the line of Apple's arm64 cores.
// Every layout test of the module checks offsets against it.
const CacheLine = 128

// NoCopy, as a blank field (`_ layout.NoCopy`), makes go vet's copylocks
// check flag every copy of the struct that holds it. It takes no space.
type NoCopy struct{}

// Lock is a no-op; it is there for go vet.
func (*NoCopy) Lock() {}

// Unlock is a no-op; it is there for go vet.
func (*NoCopy) Unlock() {}
