//go:build !linux || !amd64

package machine

// CPU returns 0: this platform has no cheap way to read the CPU number
// ([CPUReadable] is false).
func CPU() uint32 { return 0 }

// CPUReadable reports false: [CPU] has no cheap source on this platform.
func CPUReadable() bool { return false }

// CPUs returns nil: the CPU set is not read on this platform.
func CPUs() []int { return nil }
