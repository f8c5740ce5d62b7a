package hotpath

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// hot lists the functions, by the name the assembly listing gives them,
// that must compile to inline atomic instructions. Type arguments are
// matched loosely: the compiler names instantiations by shape.
var hot = []string{
	`main\.main`, // where the probe's calls are inlined, as in a user's code
	`ring/vyukov\.\(\*Ring\[.*\]\)\.(TryPush|TryPop|ForcePush|Len|Close|IsClosed)`,
	`sink\.\(\*Handle\[.*\]\)\.(Push|PushWait)`,
	`sink\.\(\*Sink\[.*\]\)\.(Push|PushWait|Handle|HandleFor|Dropped)`,
	`sink\.\(\*shard\[.*\]\)\..*`,
	`sink\.\(\*budget\[.*\]\)\..*`,
	`mpmc\.\(\*(Sender|Receiver|WeakSender|WeakReceiver)\[.*\]\)\..*`,
	`mpmc\.\(\*(channel|segQueue|segBlock|guardedRing)\[.*\]\)\..*`,
	`internal/backoff\..*`,
}

// mustAppear are hot functions that the probe instantiates and that must be
// in the listing, so that a rename cannot make the test pass by matching
// nothing.
var mustAppear = []string{
	`ring/vyukov\.\(\*Ring\[.*\]\)\.TryPush`,
	`ring/vyukov\.\(\*Ring\[.*\]\)\.TryPop`,
	`ring/vyukov\.\(\*Ring\[.*\]\)\.ForcePush`,
	`sink\.\(\*Handle\[.*\]\)\.Push`,
	`sink\.\(\*Sink\[.*\]\)\.Push`,
	`sink\.\(\*Handle\[.*\]\)\.PushWait`,
	`sink\.\(\*Sink\[.*\]\)\.PushWait`,
	`sink\.\(\*budget\[.*\]\)\.TryPush`,
	`sink\.\(\*shard\[.*\]\)\.refused`,
	`mpmc\.\(\*Sender\[.*\]\)\.TrySend`,
	`mpmc\.\(\*Sender\[.*\]\)\.Send`,
	`mpmc\.\(\*Sender\[.*\]\)\.ForceSend`,
	`mpmc\.\(\*Receiver\[.*\]\)\.TryRecv`,
	`mpmc\.\(\*Receiver\[.*\]\)\.Recv`,
	`mpmc\.\(\*Receiver\[.*\]\)\.RecvMany`,
	`mpmc\.\(\*segQueue\[.*\]\)\.TryPush`,
	`mpmc\.\(\*segQueue\[.*\]\)\.TryPop`,
}

// allowed are the sync/atomic functions that are calls in every package:
// pointer stores need the garbage collector's write barrier.
var allowed = regexp.MustCompile(`^sync/atomic\.(StorePointer|SwapPointer|CompareAndSwapPointer)\(SB\)$`)

const modulePrefix = "github.com/shardedsink/shardedsink/"

// atomicCall is one CALL into sync/atomic inside a listed function.
type atomicCall struct {
	function, callee, line string
}

// locked is one locked instruction inside a listed function: a LOCK
// prefix, or an XCHG with a memory operand (locked without the prefix).
// pos is the source position the listing gives it, "file.go:line", which
// for inlined code is the inlined function's line.
type locked struct {
	function, pos, line string
}

// listing is what scan finds in a -gcflags=-S listing.
type listing struct {
	defined []string          // every function defined, without the module prefix
	calls   []atomicCall      // calls into sync/atomic by hot functions, except the allowed ones
	locked  []locked          // locked instructions of hot functions
	callees map[string]string // hot function -> the calls it makes, one per line
	// code is every instruction of each hot function, in listing order:
	// the source position ("file.go:line") and the instruction.
	code map[string][]instruction
}

// instruction is one line of a function's listing.
type instruction struct {
	pos, text string
}

// scan reads a -gcflags=-S listing and returns the functions it defines
// (without the module prefix), the calls into sync/atomic that the
// functions matching hot make, except the allowed ones, and their locked
// instructions.
func scan(r io.Reader, hot *regexp.Regexp) (listing, error) {
	l := listing{callees: map[string]string{}, code: map[string][]instruction{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var fn string
	var isHot bool
	for sc.Scan() {
		line := sc.Text()
		if line != "" && line[0] != '\t' && line[0] != ' ' {
			if i := strings.Index(line, " STEXT"); i > 0 {
				fn = strings.ReplaceAll(line[:i], modulePrefix, "")
				isHot = hot.MatchString(fn)
				l.defined = append(l.defined, fn)
			}
			continue
		}
		if !isHot {
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) < 3 {
			continue
		}
		op := strings.TrimSpace(fields[2])
		if op != "" && !strings.HasPrefix(op, "PCDATA") && !strings.HasPrefix(op, "FUNCDATA") {
			l.code[fn] = append(l.code[fn], instruction{pos: position(fields[1]), text: strings.Join(fields[2:], "\t")})
		}
		switch {
		case op == "CALL" && len(fields) > 3:
			callee := strings.TrimSpace(fields[3])
			l.callees[fn] += strings.ReplaceAll(callee, modulePrefix, "") + "\n"
			if strings.HasPrefix(callee, "sync/atomic.") && !allowed.MatchString(callee) {
				l.calls = append(l.calls, atomicCall{function: fn, callee: callee, line: strings.TrimSpace(line)})
			}
		case strings.Contains(fields[1], "/internal/sync/"):
			// A sync.Mutex's own fast path, inlined where the compiler
			// has the sync package's bodies (which other code of the
			// program decides): a lock's cost, which the budgets leave
			// to the lock, as they do where it is a call.
		case op == "LOCK" || strings.HasPrefix(op, "XCHG") && len(fields) > 3 && strings.Contains(fields[3], "("):
			l.locked = append(l.locked, locked{function: fn, pos: position(fields[1]), line: strings.TrimSpace(line)})
		}
	}
	return l, sc.Err()
}

// position returns "file.go:line" from a listing's "0x0010 00016
// (/path/to/file.go:140)" column.
func position(col string) string {
	i, j := strings.LastIndex(col, "("), strings.LastIndex(col, ")")
	if i < 0 || j < i {
		return ""
	}
	return filepath.Base(col[i+1 : j])
}

func anchored(patterns []string) *regexp.Regexp {
	return regexp.MustCompile(`^(` + strings.Join(patterns, "|") + `)$`)
}

// TestHotPathsHaveNoAtomicCalls builds the probe as a user would and reads
// its assembly.
func TestHotPathsHaveNoAtomicCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: builds a program with the go command")
	}
	// go test puts the go command's own bin directory first in PATH.
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the go command is not available (%v): cannot build the probe", err)
	}
	l := probeListing(t, goCmd)
	for _, want := range mustAppear {
		re := anchored([]string{want})
		found := false
		for _, fn := range l.defined {
			if re.MatchString(fn) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("no function matching %s in the probe's listing: renamed? update the lists", want)
		}
	}
	for _, c := range l.calls {
		t.Errorf("%s calls %s (not inlined where the package does not import sync/atomic: use the function forms on a plain field)\n\t%s",
			c.function, c.callee, c.line)
	}
	checkLockBudgets(t, l)
	for _, c := range mustCall {
		re := anchored([]string{c.function})
		for fn, callees := range l.callees {
			// The shape instantiation holds the body; the ones named by
			// the type argument are wrappers that call it.
			if re.MatchString(fn) && strings.Contains(fn, "go.shape") && !strings.Contains(callees, c.callee) {
				t.Errorf("%s no longer calls %s (%s); update mustCall", fn, c.callee, c.why)
			}
		}
	}
}

// probe caches the scanned listing of the probe: two tests read it.
var probe struct {
	once sync.Once
	l    listing
	err  error
}

// probeListing builds testdata/probe with -gcflags=-S, once per test
// binary, and returns its scanned listing.
func probeListing(t *testing.T, goCmd string) listing {
	t.Helper()
	probe.once.Do(func() {
		dir, err := filepath.Abs(filepath.Join("testdata", "probe"))
		if err != nil {
			probe.err = err
			return
		}
		tmp, err := os.MkdirTemp("", "probe")
		if err != nil {
			probe.err = err
			return
		}
		defer os.RemoveAll(tmp)
		cmd := exec.Command(goCmd, "build", "-o", filepath.Join(tmp, "probe"), "-gcflags=-S", ".")
		cmd.Dir = dir
		// amd64 so that the listing's CALL mnemonic is the one scan reads, on
		// any host; no workspace, and no flags from the environment (-race
		// would add calls of its own).
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod -buildvcs=false",
			"GOARCH=amd64", "GOAMD64=v1", "CGO_ENABLED=0", "GOEXPERIMENT=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			probe.err = fmt.Errorf("building the probe failed: %v\n%s", err, tail(out))
			return
		}
		probe.l, probe.err = scan(strings.NewReader(string(out)), anchored(hot))
	})
	if probe.err != nil {
		t.Fatal(probe.err)
	}
	return probe.l
}

// TestScanFindsAtomicCalls checks the scanner on a listing with one call it
// must report, one it must allow, and one outside the hot set.
func TestScanFindsAtomicCalls(t *testing.T) {
	listing := strings.Join([]string{
		modulePrefix + "ring/vyukov.(*Ring[go.shape.struct { main.a uint64 }]).TryPush STEXT size=300 args=0x28 locals=0x48 funcid=0x0 align=0x0",
		"\t0x0010 00016 (vyukov.go:140)\tCALL\tsync/atomic.(*Uint64).Load(SB)",
		"\t0x0020 00032 (vyukov.go:150)\tCALL\tsync/atomic.StorePointer(SB)",
		"\t0x0030 00048 (vyukov.go:151)\tCALL\t" + modulePrefix + "internal/backoff.(*Backoff).Spin(SB)",
		modulePrefix + "sink.(*Sink[go.shape.int]).Stats STEXT size=100",
		"\t0x0010 00016 (stats.go:40)\tCALL\tsync/atomic.(*Uint64).Load(SB)",
		"",
	}, "\n")
	l, err := scan(strings.NewReader(listing), anchored(hot))
	if err != nil {
		t.Fatal(err)
	}
	defined, calls := l.defined, l.calls
	if len(defined) != 2 {
		t.Errorf("defined = %q, want the two functions", defined)
	}
	want := atomicCall{
		function: "ring/vyukov.(*Ring[go.shape.struct { main.a uint64 }]).TryPush",
		callee:   "sync/atomic.(*Uint64).Load(SB)",
	}
	if len(calls) != 1 || calls[0].function != want.function || calls[0].callee != want.callee {
		t.Fatalf("calls = %+v, want exactly %+v", calls, want)
	}
}

func tail(b []byte) string {
	const max = 4000
	if len(b) > max {
		return fmt.Sprintf("...%s", b[len(b)-max:])
	}
	return string(b)
}
