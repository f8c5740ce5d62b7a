package sink

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/machine"
	"github.com/shardedsink/shardedsink/ring/vyukov"
)

var nopAction = ActionFunc[int](func(context.Context, []int) {})

func settle(t *testing.T, c Config[int]) settings[int] {
	t.Helper()
	st, err := c.settle(nopAction)
	require.NoError(t, err)
	return st
}

func TestSettleAppliesDefaults(t *testing.T) {
	st := settle(t, Config[int]{})
	require.Equal(t, "sink", st.name)
	require.Equal(t, DefaultShards(), st.shards)
	require.Equal(t, 8192, st.ringCapacity)
	require.Equal(t, 256, st.batchSize)
	require.NotNil(t, st.factory)
	require.Equal(t, 5*time.Second, st.overloadInterval)
	require.Equal(t, IdleWake, st.idle)
	require.Equal(t, defaultWakeRecheck, st.idleSleep)
	require.True(t, st.noRecheck, "the default ring's doorbell cannot slip: no recheck")
	require.False(t, settle(t, Config[int]{IdleSleep: time.Second}).noRecheck, "an IdleSleep of the user's keeps it")
	require.False(t, settle(t, Config[int]{Ring: vyukov.Factory[int]}).noRecheck, "any Config.Ring keeps it")
	require.Equal(t, min(2, st.shards-1), st.stealVictims)
	require.Equal(t, 64, st.stealItems)

	require.Equal(t, defaultPollSleep, settle(t, Config[int]{Idle: IdlePoll}).idleSleep)
}

func TestDefaultShardsFollowGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	if homesFromCPU() {
		cpus := len(machine.CPUs())
		for _, procs := range []int{1, 2, 8, 32} {
			runtime.GOMAXPROCS(procs)
			want := defaultShards(true, cpus, procs)
			require.Equal(t, want, settle(t, Config[int]{}).shards, "CPU homes, %d CPUs, GOMAXPROCS=%d", cpus, procs)
		}
	}
	useStackHomes(t)
	for procs, want := range map[int]int{1: 4, 2: 8, 8: 32, 32: 32} {
		runtime.GOMAXPROCS(procs)
		require.Equal(t, want, settle(t, Config[int]{}).shards, "stack homes, GOMAXPROCS=%d", procs)
	}
}

// Port of clamps_drain_batch_to_ring_capacity.
func TestSettleClampsBatchToRingCapacity(t *testing.T) {
	require.Equal(t, 8, settle(t, Config[int]{RingCapacity: 8, BatchSize: 256}).batchSize)
}

// Port of clamps_steal_budgets.
func TestSettleClampsStealBudgets(t *testing.T) {
	st := settle(t, Config[int]{Shards: 3, BatchSize: 10})
	st.steal(100, 100, false)
	require.Equal(t, 2, st.stealVictims)
	require.Equal(t, 10, st.stealItems)
}

// Port of single_shard_disables_stealing.
func TestSettleSingleShardDisablesStealing(t *testing.T) {
	st := settle(t, Config[int]{Shards: 1})
	require.Zero(t, st.stealVictims)
	st.steal(5, 64, false)
	require.Zero(t, st.stealVictims)
}

func TestSettleDisableStealing(t *testing.T) {
	require.Zero(t, settle(t, Config[int]{Shards: 4, DisableStealing: true}).stealVictims)
	require.Equal(t, 2, settle(t, Config[int]{Shards: 4}).stealVictims)
}

// The docs state the unexported defaults as numbers: DefaultShards' doc
// the factors of the shard count, Config.IdleSleep's and IdleMode's the
// idle sleeps, docs/design.md the steal budgets. They follow the
// constants.
func TestTheDocsStateTheUnexportedDefaults(t *testing.T) {
	text := func(path string) string {
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		return strings.Join(strings.Fields(strings.ReplaceAll(string(src), "//", "")), " ")
	}
	spaced := func(d time.Duration) string { // 100ms as the docs write it: 100 ms
		s := d.String()
		i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
		return s[:i] + " " + s[i:]
	}
	has := func(doc, path, want string) {
		t.Helper()
		require.Truef(t, strings.Contains(doc, want), "%s does not say %q", path, want)
	}
	cpuhome := text("cpuhome.go")
	has(cpuhome, "cpuhome.go", fmt.Sprintf("at most %d × GOMAXPROCS and at most %d:", defaultShardsPerP, defaultMaxCPUShards))
	has(cpuhome, "cpuhome.go", fmt.Sprintf("default is %d × GOMAXPROCS clamped to [1, %d]:", defaultShardsPerP, defaultMaxShards))
	config := text("config.go")
	has(config, "config.go", fmt.Sprintf("IdleSleep] (default %s), fires", spaced(defaultWakeRecheck)))
	has(config, "config.go", fmt.Sprintf("IdleSleep] (default %s) and looks again", spaced(defaultPollSleep)))
	has(config, "config.go", fmt.Sprintf("IdlePoll mode (default %s)", spaced(defaultPollSleep)))
	has(config, "config.go", fmt.Sprintf("IdleWake mode (default %s)", spaced(defaultWakeRecheck)))
	design := text("../docs/design.md")
	has(design, "docs/design.md", fmt.Sprintf("at most %d shards and %d values from each per round", defaultStealVictims, defaultStealItems))
}
