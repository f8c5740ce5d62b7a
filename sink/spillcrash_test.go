//go:build unix

package sink_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/sink"
)

// crashCfg is the sink of the crash tests: one shard, records of 1000
// bytes (64 fill the spill log's write buffer), a sync every 20 ms.
func crashCfg(dir string) sink.Config[uint64] {
	cfg := spillCfg(dir, 1)
	cfg.Spill.Codec = u64Codec{size: 1000}
	cfg.Spill.MaxBytes = 64 << 20
	return cfg
}

// TestSpillCrashChild is the child process of the crash tests: a sink
// whose Drain never returns, into which one producer pushes values 0,
// 1, ... (n of them, or until it is killed when n is 0). Every 5 ms it
// prints "D S": the values handed to the stalled Drain and those spilled.
// After n values it waits for five sync intervals and prints "quiet D S".
func TestSpillCrashChild(t *testing.T) {
	dir := os.Getenv("SINK_SPILL_CRASH_DIR")
	if dir == "" {
		t.Skip("the child process of the spill tier's crash tests")
	}
	var n int
	fmt.Sscan(os.Getenv("SINK_SPILL_CRASH_N"), &n)
	s, err := sink.New(crashCfg(dir), sink.ActionFunc[uint64](func(ctx context.Context, _ []uint64) { <-ctx.Done() }))
	if err != nil {
		fmt.Println("new:", err)
		os.Exit(1)
	}
	out := bufio.NewWriter(os.Stdout)
	go func() {
		for range time.Tick(5 * time.Millisecond) {
			st := s.Stats()
			fmt.Fprintf(out, "%d %d\n", st.Drained, st.Spilled)
			out.Flush()
		}
	}()
	h := s.Handle()
	for i := 0; n == 0 || i < n; i++ {
		if !h.Push(uint64(i)) {
			i-- // shed for a full ring while the spiller catches up: again
		}
	}
	time.Sleep(5 * crashCfg(dir).Spill.SyncInterval)
	st := s.Stats()
	fmt.Printf("quiet %d %d\n", st.Drained, st.Spilled)
	select {}
}

// crashChild starts the child on dir, pushing n values (0: until killed).
func crashChild(t *testing.T, dir string, n int) (*exec.Cmd, *bufio.Scanner) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestSpillCrashChild$")
	cmd.Env = append(os.Environ(), "SINK_SPILL_CRASH_DIR="+dir, fmt.Sprint("SINK_SPILL_CRASH_N=", n))
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	return cmd, bufio.NewScanner(stdout)
}

// recoverAll starts a sink on dir and returns what it hands to Drain
// before it goes quiet.
func recoverAll(t *testing.T, dir string) ([]uint64, sink.Stats) {
	return recoverAllOf(t, crashCfg(dir))
}

// recoverAllOf is recoverAll with a sink of cfg.
func recoverAllOf(t *testing.T, cfg sink.Config[uint64]) ([]uint64, sink.Stats) {
	c := &collector[uint64]{}
	s, err := sink.New(cfg, c)
	require.NoError(t, err)
	last := -1
	for c.count() != last {
		last = c.count()
		time.Sleep(50 * time.Millisecond)
	}
	require.NoError(t, s.Shutdown(t.Context()))
	return c.values(), s.Stats()
}

// A SIGKILL of a process whose sink spilled loses nothing that was
// synced: killed after its pushes went quiet for five sync intervals, a
// sink on the directory hands Drain every value spilled, once, in order,
// from the first one the stalled Drain call did not get (10 of 10 runs).
// Killed mid-spill, it hands back a run without a gap or a repeat that
// reaches what was spilled syncedWithin before the kill.
//
// syncedWithin is how long before the kill a value was spilled for the
// test to hold it synced: 15 sync intervals of 20 ms, since on 2 cores
// busy with other test binaries a sync (an fsync on the syncer's
// goroutine) came more than 100 ms late (13,754 recovered of 13,812
// spilled 100 ms before the kill).
func TestASIGKILLLosesNoSpilledValueThatWasSynced(t *testing.T) {
	const syncedWithin = 300 * time.Millisecond
	if testing.Short() {
		t.Skip("child processes for a few seconds")
	}
	for run := range 10 {
		dir := t.TempDir()
		midSpill := run%2 == 1
		n := 2000 + 300*run
		if midSpill {
			n = 0
		}
		cmd, lines := crashChild(t, dir, n)
		var handed, spilled, spilledBefore uint64
		began := time.Now()
		var seen []time.Time
		var spills []uint64
		for lines.Scan() {
			var d, sp uint64
			if _, err := fmt.Sscanf(lines.Text(), "quiet %d %d", &d, &sp); err == nil {
				handed, spilled = d, sp
				break
			}
			_, err := fmt.Sscanf(lines.Text(), "%d %d", &d, &sp)
			require.NoError(t, err, "the child said %q", lines.Text())
			handed = d
			seen, spills = append(seen, time.Now()), append(spills, sp)
			if midSpill && time.Since(began) > 2*syncedWithin {
				break
			}
		}
		require.NoError(t, cmd.Process.Kill()) // SIGKILL
		_ = cmd.Wait()
		kill := time.Now()
		for i := range seen {
			if kill.Sub(seen[i]) >= syncedWithin {
				spilledBefore = spills[i]
			}
		}
		got, st := recoverAll(t, dir)
		require.Equal(t, uint64(len(got)), st.Recovered, "run %d", run)
		for i, v := range got {
			require.Equal(t, handed+uint64(i), v, "run %d: value %d of those recovered", run, i)
		}
		if midSpill {
			require.GreaterOrEqual(t, uint64(len(got)), spilledBefore, "run %d: spilled %v before the kill", run, syncedWithin)
		} else {
			require.Equal(t, spilled, uint64(len(got)), "run %d: every spilled value", run)
		}
		t.Logf("run %d: handed %d, spilled %d (%d %v before the kill), recovered %d", run, handed, spilled, spilledBefore, syncedWithin, len(got))
	}
}
