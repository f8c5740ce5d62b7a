package sink

import "testing"

// Every sink of the package's tests checks its ledgers at every step
// (ledger.go).
func init() { checkLedgers = true }

// UseStackHomes makes the sinks built until the test ends take the home of
// the handle-less Push from the goroutine's stack, as on a platform without
// a cheap CPU number, so that both paths run on one machine.
func UseStackHomes(t testing.TB) { useStackHomes(t) }

// UsesCPUHomes reports whether s takes Push's home from the CPU.
func UsesCPUHomes[T any](s *Sink[T]) bool { return s.cpuHomes != nil }

// CPUHome returns the shard that Push from CPU cpu starts from (the first
// of its group), or -1 when s takes its homes from the stack.
func CPUHome[T any](s *Sink[T], cpu int) int {
	if s.cpuHomes == nil {
		return -1
	}
	return int(s.cpuEntry(uint32(cpu)) & firstMask)
}

// CPUGroup returns the first shard and the number of shards of the group
// that CPU cpu owns, or -1, 0 when s takes its homes from the stack.
func CPUGroup[T any](s *Sink[T], cpu int) (first, size int) {
	if s.cpuHomes == nil {
		return -1, 0
	}
	e := s.cpuEntry(uint32(cpu))
	return int(e & firstMask), max(int(e>>groupShift), 1)
}

// HandOffRecoveringCap is handOffRecoveringCap.
const HandOffRecoveringCap = handOffRecoveringCap

// HandOffStall is handOffStall.
const HandOffStall = handOffStall

// PaceRound is paceRound.
const PaceRound = paceRound

// WakeRecheck is defaultWakeRecheck.
const WakeRecheck = defaultWakeRecheck

// MaxStackShards is defaultMaxShards.
const MaxStackShards = defaultMaxShards

// NewStealing is New with the steal budgets set: victims a round and
// values from each (the budgets the sink's tests vary).
func NewStealing[T any](cfg Config[T], action Action[T], victims, items int) (*Sink[T], error) {
	st, err := cfg.settle(action)
	if err != nil {
		return nil, err
	}
	st.steal(victims, items, cfg.DisableStealing)
	s, err := buildSettled(st, action)
	if err != nil {
		return nil, err
	}
	s.start()
	return s, nil
}
