package ringtest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/anishathalye/porcupine"

	"github.com/shardedsink/shardedsink/ring"
)

// checkLinearizable records many small concurrent histories, 2 to 4
// goroutines doing 2 to 5 operations each on a ring of capacity 1 to 3
// (sometimes pre-filled), and checks each with porcupine against a bounded
// FIFO queue. Small histories keep the check fast and a failure readable;
// their number and the random yields between operations give the
// interleavings variety.
func checkLinearizable(f ring.Factory[int], short bool) error {
	histories := 1000
	if short {
		histories = 150
	}
	rng := rand.New(rand.NewPCG(3, 4)) // fixed seed: the scripts reproduce, the interleavings do not
	for h := range histories {
		capacity := 1 + rng.IntN(maxHistoryCapacity)
		ops := recordHistory(f, capacity, rng)
		if !porcupine.CheckOperations(queueModel(capacity), ops) {
			return fmt.Errorf("history %d on a ring of capacity %d is not linearizable:\n%s",
				h, capacity, describeHistory(ops))
		}
	}
	return nil
}

// maxHistoryCapacity bounds the rings in the histories, so that the model
// state fits in a comparable array.
const maxHistoryCapacity = 3

type opKind uint8

const (
	opPush opKind = iota
	opPop
	opLen
)

type queueInput struct {
	kind  opKind
	value int // the value to push
}

type queueOutput struct {
	ok    bool // TryPush's or TryPop's result
	value int  // the value popped
	n     int  // Len's result
}

// queueState is the model state: a value, so that Step cannot mutate the
// state it was given and == compares states.
type queueState struct {
	n      int
	values [maxHistoryCapacity]int
}

// queueModel is a bounded FIFO queue of the given capacity as porcupine
// expects it.
func queueModel(capacity int) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return queueState{} },
		Step: func(state, input, output any) (bool, any) {
			s := state.(queueState)
			in := input.(queueInput)
			out := output.(queueOutput)
			switch in.kind {
			case opPush:
				if s.n == capacity {
					return !out.ok, s
				}
				if !out.ok {
					return false, s
				}
				s.values[s.n] = in.value
				s.n++
				return true, s
			case opPop:
				if s.n == 0 {
					return !out.ok && out.value == 0, s
				}
				if !out.ok || out.value != s.values[0] {
					return false, s
				}
				copy(s.values[:], s.values[1:s.n])
				s.n--
				s.values[s.n] = 0
				return true, s
			default:
				return out.n == s.n, s
			}
		},
		DescribeOperation: describeOperation,
	}
}

func describeOperation(input, output any) string {
	in := input.(queueInput)
	out := output.(queueOutput)
	switch in.kind {
	case opPush:
		return fmt.Sprintf("TryPush(%d) = %t", in.value, out.ok)
	case opPop:
		return fmt.Sprintf("TryPop() = (%d, %t)", out.value, out.ok)
	default:
		return fmt.Sprintf("Len() = %d", out.n)
	}
}

func describeHistory(ops []porcupine.Operation) string {
	ops = slices.Clone(ops)
	slices.SortFunc(ops, func(a, b porcupine.Operation) int { return int(a.Call - b.Call) })
	var b strings.Builder
	for _, op := range ops {
		fmt.Fprintf(&b, "\tgoroutine %d, from %d to %d: %s\n",
			op.ClientId, op.Call, op.Return, describeOperation(op.Input, op.Output))
	}
	return b.String()
}

// step is one scripted operation and a delay before it.
type step struct {
	in    queueInput
	delay int // iterations of busy work, to vary the interleavings
}

// spin does n iterations of busy work.
//
//go:noinline
func spin(n int) {
	for range n {
		spinOnce()
	}
}

//go:noinline
func spinOnce() {}

// recordHistory pre-fills a new ring from goroutine 0, then runs scripted
// goroutines 1 to 4 together and records when each operation was called and
// when it returned. The timestamps come from one atomic counter read just
// before the call and just after the return, so an operation that returned
// before another was called has the smaller Return.
func recordHistory(f ring.Factory[int], capacity int, rng *rand.Rand) []porcupine.Operation {
	r := f(capacity)
	var clock atomic.Int64
	next := 1
	var ops []porcupine.Operation
	for range rng.IntN(capacity + 1) {
		ops = append(ops, apply(r, &clock, 0, queueInput{kind: opPush, value: next}))
		next++
	}

	scripts := make([][]step, 2+rng.IntN(3))
	for g := range scripts {
		for range 2 + rng.IntN(4) {
			s := step{delay: rng.IntN(4) * rng.IntN(20)}
			switch k := rng.IntN(10); {
			case k < 5:
				s.in = queueInput{kind: opPush, value: next}
				next++
			case k < 9:
				s.in = queueInput{kind: opPop}
			default:
				s.in = queueInput{kind: opLen}
			}
			scripts[g] = append(scripts[g], s)
		}
	}

	line := newStartLine(len(scripts))
	recorded := make([][]porcupine.Operation, len(scripts))
	var wg sync.WaitGroup
	for g, script := range scripts {
		wg.Go(func() {
			line.wait()
			for _, s := range script {
				spin(s.delay)
				recorded[g] = append(recorded[g], apply(r, &clock, g+1, s.in))
			}
		})
	}
	wg.Wait()
	for _, rec := range recorded {
		ops = append(ops, rec...)
	}
	return ops
}

// apply runs one operation on the ring and records it.
func apply(r ring.Ring[int], clock *atomic.Int64, client int, in queueInput) porcupine.Operation {
	call := clock.Add(1)
	var out queueOutput
	switch in.kind {
	case opPush:
		out.ok = r.TryPush(in.value)
	case opPop:
		out.value, out.ok = r.TryPop()
	default:
		out.n = r.Len()
	}
	return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: clock.Add(1)}
}
