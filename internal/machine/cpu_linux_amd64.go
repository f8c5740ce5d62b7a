package machine

import (
	"runtime"
	"sync"
	"syscall"
	"unsafe"
)

// CPU returns the number of the CPU the calling thread was running on when
// it read it (RDPID). It is meaningful only where [CPUReadable] reports
// true; the thread may move to another CPU right after the read.
func CPU() uint32

// hasRDPID reports whether the processor has the RDPID instruction.
func hasRDPID() bool

// sysGetcpu is getcpu(2) in the x86-64 system call table; package syscall
// has no name for it.
const sysGetcpu = 309

// CPUReadable reports whether [CPU] returns real CPU numbers here. The
// first call checks, once for the process, that the processor has RDPID
// and that what it reads agrees with the getcpu system call on two
// different CPUs (on one, when the process may run on only one), so that a
// hypervisor that does not keep IA32_TSC_AUX up to date is detected. The
// check starts a short-lived OS thread per CPU it tests.
func CPUReadable() bool { return cpuReadable() }

var cpuReadable = sync.OnceValue(func() bool {
	if !hasRDPID() {
		return false
	}
	cpus := CPUs()
	if len(cpus) == 0 {
		return false
	}
	// The first and the last CPU of the set: a register that reads 0
	// everywhere is caught on the last one.
	for _, c := range []int{cpus[0], cpus[len(cpus)-1]} {
		if !agreesOn(c) {
			return false
		}
	}
	return true
})

// agreesOn pins a new OS thread to cpu and reports whether RDPID and getcpu
// both say cpu there. The goroutine ends without unlocking its thread, so
// the runtime ends the pinned thread with it and no goroutine ever runs on
// it again.
func agreesOn(cpu int) bool {
	result := make(chan bool, 1)
	go func() {
		runtime.LockOSThread()
		var set cpuSet
		set.add(cpu)
		if _, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0,
			unsafe.Sizeof(set), uintptr(unsafe.Pointer(&set))); errno != 0 {
			result <- false
			return
		}
		var got, node uint32
		if _, _, errno := syscall.RawSyscall(sysGetcpu, uintptr(unsafe.Pointer(&got)),
			uintptr(unsafe.Pointer(&node)), 0); errno != 0 {
			result <- false
			return
		}
		result <- int(got) == cpu && int(CPU()) == cpu
	}()
	return <-result
}

// CPUs returns the numbers of the CPUs the calling thread may run on
// (sched_getaffinity), in increasing order, or nil if the system call
// fails.
func CPUs() []int {
	var set cpuSet
	n, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, 0,
		unsafe.Sizeof(set), uintptr(unsafe.Pointer(&set)))
	if errno != 0 {
		return nil
	}
	var cpus []int
	for i := range int(n) * 8 {
		if set.has(i) {
			cpus = append(cpus, i)
		}
	}
	return cpus
}

// cpuSet is the kernel's cpu_set_t for up to 8,192 CPUs.
type cpuSet [8192 / 64]uint64

func (s *cpuSet) add(cpu int)      { s[cpu/64] |= 1 << (cpu % 64) }
func (s *cpuSet) has(cpu int) bool { return s[cpu/64]&(1<<(cpu%64)) != 0 }
