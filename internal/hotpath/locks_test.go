package hotpath

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// lockBudget is the most locked instructions (LOCK-prefixed, or XCHG with
// memory) that each hot function may hold in its own body, outside the
// slow paths below. A locked instruction costs about 9 ns uncontended on a
// KVM Intel Xeon and hundreds when the line is contended, so these counts
// are the instruction floor of the library: one per successful ring
// operation, the compare-and-swap that claims the slot. A function missing
// here has a budget of 0.
var lockBudget = []struct {
	function string
	max      int
	why      string
}{
	{`ring/vyukov\.\(\*Ring\[.*\]\)\.TryPush`, 1, "the tail's compare-and-swap; the stamp publish is a release store"},
	{`ring/vyukov\.\(\*Ring\[.*\]\)\.TryPop`, 1, "the head's compare-and-swap; the stamp publish is a release store"},
	{`ring/vyukov\.\(\*Ring\[.*\]\)\.ForcePush`, 3, "1 when nothing is displaced; 2 when the oldest value is (head's and tail's compare-and-swap); the third is Close's race"},
	{`ring/vyukov\.\(\*Ring\[.*\]\)\.Close`, 1, "the atomic OR of the closed mark"},
	{`sink\.\(\*Sink\[.*\]\)\.Handle`, 1, "the round-robin cursor"},
	{`sink\.\(\*shard\[.*\]\)\.setSleeping`, 1, "the worker's side of the doorbell's Dekker pair"},
	{`sink\.\(\*budget\[.*\]\)\.(TryPush|reserve)`, 3, "MaxQueuedBytes: the reserve's add, the one on success; its undo when the share is spent (and, in TryPush, the give-back when the ring refuses)"},
	{`sink\.\(\*budget\[.*\]\)\.release`, 1, "the give-back of a value's bytes"},
	{`sink\.\(\*shard\[.*\]\)\.refused`, 4, "a refused push under a byte budget: the reserve's add and undo, the give-backs of a displaced value and of a refused one (its drop counts are slow paths)"},
	{`mpmc\.\(\*segQueue\[.*\]\)\.TryPush`, 1, "the tail index's compare-and-swap; WRITE is a release store (only the producer writes the state until then)"},
	{`mpmc\.\(\*segQueue\[.*\]\)\.TryPop`, 1, "the head index's compare-and-swap; READ is a release store (only the consumer writes the state then)"},
	{`mpmc\.\(\*segQueue\[.*\]\)\.newBlock`, 2, "once per block: the spares' TryLock and Unlock"},
	{`mpmc\.\(\*segQueue\[.*\]\)\.putSpare`, 1, "once per block: the spares' TryLock (Unlock is a call)"},
	{`mpmc\.\(\*segQueue\[.*\]\)\.installNext`, 1, "once per block: the add that moves tail off the sentinel, an add so that a concurrent close mark stays"},
	{`mpmc\.\(\*segQueue\[.*\]\)\.(retire|enterNext)`, 0, "once per block: READ marks are read with loads, head moves off the sentinel with a release store"},
	{`mpmc\.\(\*segQueue\[.*\]\)\.Close`, 1, "the atomic OR of the closed mark"},
	{`mpmc\.\(\*Sender\[.*\]\)\.Release`, 3, "the released flag's swap, the leak tracker's store and the sender count (releaseSender inlined)"},
	{`mpmc\.\(\*Receiver\[.*\]\)\.Release`, 2, "the released flag's swap and the leak tracker's store (the count is in releaseReceiver)"},
	{`mpmc\.\(\*(Sender|Receiver)\[.*\]\)\.Clone`, 1, "the handle count"},
	{`mpmc\.\(\*WeakSender\[.*\]\)\.Upgrade`, 1, "the handle count"},
	{`mpmc\.\(\*WeakReceiver\[.*\]\)\.Upgrade`, 1, "the handle count"},
	{`mpmc\.\(\*channel\[.*\]\)\.(releaseSender|releaseReceiver)`, 1, "the handle count"},
	{`mpmc\.\(\*channel\[.*\]\)\.close`, 2, "the closed flag and the ring's close"},
	{`mpmc\.\(\*channel\[.*\]\)\.ready`, 2, "Receiver.Ready's first call, once per channel: the armed bit's OR into each queue's waiting word (mpmc/ready.go)"},
	{`mpmc\.\(\*channel\[.*\]\)\.(send|recv)`, 1, "a Send or Recv that waits: the waiter count's add, the waiter's side of the Dekker pair (the queue lock's are in calls)"},
}

// slowPaths are functions whose locked instructions are off the success
// path wherever the compiler inlines them: their source lines are excluded
// from every budget.
var slowPaths = []struct{ file, function, why string }{
	{"../../sink/shard.go", "countFull", "a push rejected for a full ring"},
	{"../../sink/shard.go", "wake", "a push that finds the worker asleep"},
	{"../../sink/shard.go", "countForBytes", "a push that the byte budget refused"},
	{"../../sink/drops.go", "countDisplaced", "a value that DropOldest displaced"},
	{"../../sink/drops.go", "countAfterShutdown", "a push rejected after Shutdown began"},
	{"../../sink/drops.go", "countForDisk", "a push rejected while the spill tier could take nothing"},
}

// mustCall are calls that hot functions must make: the one assembly call of
// each hot path, named so that it cannot disappear unnoticed.
var mustCall = []struct{ function, callee, why string }{
	{`ring/vyukov\.\(\*Ring\[.*\]\)\.TryPush`, "internal/machine.StoreRelease(SB)", "the stamp publish"},
	{`ring/vyukov\.\(\*Ring\[.*\]\)\.TryPop`, "internal/machine.StoreRelease(SB)", "the stamp publish"},
	{`sink\.\(\*Sink\[.*\]\)\.Push`, "internal/machine.CPU(SB)", "the CPU home"},
	{`mpmc\.\(\*segQueue\[.*\]\)\.TryPush`, "internal/machine.StoreRelease(SB)", "the WRITE publish"},
	{`mpmc\.\(\*segQueue\[.*\]\)\.TryPop`, "internal/machine.StoreRelease(SB)", "the READ mark"},
}

// checkLockBudgets fails for every hot function that holds more locked
// instructions than its budget, listing them.
func checkLockBudgets(t *testing.T, l listing) {
	t.Helper()
	slow := slowLines(t)
	byFunction := map[string][]locked{}
	for _, lk := range l.locked {
		if slow[lk.pos] {
			continue
		}
		byFunction[lk.function] = append(byFunction[lk.function], lk)
	}
	for fn, lks := range byFunction {
		if strings.HasPrefix(fn, "main.") {
			continue // the probe's own code, where everything is inlined
		}
		max, why := budgetOf(fn)
		if len(lks) > max {
			var b strings.Builder
			for _, lk := range lks {
				fmt.Fprintf(&b, "\n\t%s", lk.line)
			}
			t.Errorf("%s holds %d locked instructions, budget %d (%s):%s", fn, len(lks), max, why, b.String())
		}
	}
}

func budgetOf(fn string) (int, string) {
	for _, b := range lockBudget {
		if anchored([]string{b.function}).MatchString(fn) {
			return b.max, b.why
		}
	}
	return 0, "not in lockBudget"
}

// slowLines returns the source positions ("file.go:line") of the bodies of
// the slow-path functions.
func slowLines(t *testing.T) map[string]bool {
	t.Helper()
	lines := map[string]bool{}
	fset := token.NewFileSet()
	for _, sp := range slowPaths {
		f, err := parser.ParseFile(fset, sp.file, nil, 0)
		if err != nil {
			t.Fatalf("slow path %s: %v", sp.function, err)
		}
		found := false
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Name.Name != sp.function {
				continue
			}
			found = true
			from, to := fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
			for n := from; n <= to; n++ {
				lines[fmt.Sprintf("%s:%d", filepath.Base(sp.file), n)] = true
			}
		}
		if !found {
			t.Fatalf("slow path %s not found in %s: renamed? update slowPaths", sp.function, sp.file)
		}
	}
	return lines
}

// TestScanCountsLockedInstructions checks the scanner on a listing with a
// LOCK prefix, an XCHG with memory (locked), and an XCHG of two registers
// (the compiler's NOP, not locked).
func TestScanCountsLockedInstructions(t *testing.T) {
	listing := strings.Join([]string{
		modulePrefix + "ring/vyukov.(*Ring[go.shape.int]).TryPush STEXT size=300",
		"\t0x00c3 00195 (/x/ring/vyukov/vyukov.go:186)\tLOCK",
		"\t0x00c4 00196 (/x/ring/vyukov/vyukov.go:186)\tCMPXCHGQ\tR11, 256(R12)",
		"\t0x00d0 00208 (/x/ring/vyukov/vyukov.go:188)\tXCHGQ\tAX, 8(CX)",
		"\t0x01a9 00425 (/x/ring/vyukov/vyukov.go:180)\tXCHGL\tAX, AX",
		"",
	}, "\n")
	l, err := scan(strings.NewReader(listing), anchored(hot))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.locked) != 2 || l.locked[0].pos != "vyukov.go:186" || l.locked[1].pos != "vyukov.go:188" {
		t.Fatalf("locked = %+v, want the LOCK at vyukov.go:186 and the XCHGQ at vyukov.go:188", l.locked)
	}
	if max, _ := budgetOf(l.locked[0].function); max != 1 {
		t.Fatalf("TryPush's budget = %d, want 1", max)
	}
}
