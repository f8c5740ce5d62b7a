package otelsink

// The environment variables, read as the SDK's batch processors read them:
// options take precedence, bad values are reported to otel.Handle and
// ignored. (Goroutine leaks are checked by the package's TestMain.)

import (
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"

	"github.com/shardedsink/shardedsink/sink"
)

// handled swaps in an error handler that keeps what otel.Handle is given,
// until the test ends.
func handled(t *testing.T) func() []error {
	var mu sync.Mutex
	var errs []error
	prev := otel.GetErrorHandler()
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
	}))
	t.Cleanup(func() { otel.SetErrorHandler(prev) })
	return func() []error {
		mu.Lock()
		defer mu.Unlock()
		return append([]error(nil), errs...)
	}
}

func TestEnvironmentVariables(t *testing.T) {
	tests := []struct {
		name    string
		kind    kind
		env     map[string]string
		opts    []Option
		want    func(t *testing.T, s settings)
		handled int // errors handed to otel.Handle
	}{
		{"span defaults", spanKind, nil, []Option{WithShards(2)}, func(t *testing.T, s settings) {
			require.Equal(t, 2*DefaultQueuePerShard, s.perShard*s.shards)
			require.Equal(t, DefaultMaxExportBatchSize, s.batchSize)
			require.Equal(t, DefaultExportTimeout, s.exportTimeout)
			require.Equal(t, 5*time.Second, s.batchTimeout, "the BSP's schedule delay")
		}, 0},
		{"log defaults", logKind, nil, nil, func(t *testing.T, s settings) {
			require.Equal(t, time.Second, s.batchTimeout, "the log BatchProcessor's export interval")
			require.Equal(t, min(DefaultLogShardsPerP*runtime.GOMAXPROCS(0), DefaultLogMaxShards), s.shards)
			require.Equal(t, DefaultLogQueuePerShard, s.perShard)
		}, 0},
		{"every BSP variable", spanKind, map[string]string{
			EnvBSPMaxQueueSize: "64", EnvBSPMaxExportBatchSize: "8", EnvBSPExportTimeout: "1500", EnvBSPScheduleDelay: "250",
		}, []Option{WithShards(2)}, func(t *testing.T, s settings) {
			require.Equal(t, 32, s.perShard)
			require.Equal(t, 8, s.batchSize)
			require.Equal(t, 1500*time.Millisecond, s.exportTimeout)
			require.Equal(t, 250*time.Millisecond, s.batchTimeout)
		}, 0},
		{"every BLRP variable", logKind, map[string]string{
			EnvBLRPMaxQueueSize: "64", EnvBLRPMaxExportBatchSize: "8", EnvBLRPExportTimeout: "1500", EnvBLRPScheduleDelay: "250",
			EnvBSPMaxQueueSize: "1000", // not the log processor's
		}, []Option{WithShards(2)}, func(t *testing.T, s settings) {
			require.Equal(t, 32, s.perShard)
			require.Equal(t, 8, s.batchSize)
			require.Equal(t, 1500*time.Millisecond, s.exportTimeout)
			require.Equal(t, 250*time.Millisecond, s.batchTimeout)
		}, 0},
		{"options take precedence", spanKind, map[string]string{
			EnvBSPMaxQueueSize: "64", EnvBSPMaxExportBatchSize: "8", EnvBSPExportTimeout: "1500", EnvBSPScheduleDelay: "250",
		}, []Option{WithShards(2), WithMaxQueueSize(20), WithMaxExportBatchSize(3), WithExportTimeout(time.Second), WithBatchTimeout(0)},
			func(t *testing.T, s settings) {
				require.Equal(t, 10, s.perShard)
				require.Equal(t, 3, s.batchSize)
				require.Equal(t, time.Second, s.exportTimeout)
				require.Zero(t, s.batchTimeout)
			}, 0},
		{"values that are not integers are reported and ignored", spanKind, map[string]string{
			EnvBSPMaxQueueSize: "lots", EnvBSPExportTimeout: "1s", EnvBSPScheduleDelay: "5.5",
		}, []Option{WithShards(2)}, func(t *testing.T, s settings) {
			require.Equal(t, DefaultQueuePerShard, s.perShard)
			require.Equal(t, DefaultExportTimeout, s.exportTimeout)
			require.Equal(t, DefaultBatchTimeout, s.batchTimeout)
		}, 3},
		{"sizes below 1 are reported and ignored", logKind, map[string]string{
			EnvBLRPMaxQueueSize: "0", EnvBLRPMaxExportBatchSize: "-4",
		}, []Option{WithShards(2)}, func(t *testing.T, s settings) {
			require.Equal(t, DefaultLogQueuePerShard, s.perShard)
			require.Equal(t, DefaultMaxExportBatchSize, s.batchSize)
		}, 2},
		{"a zero duration: taken for spans (the BSP takes it), ignored for logs", spanKind, map[string]string{
			EnvBSPExportTimeout: "0", EnvBSPScheduleDelay: "0",
		}, []Option{WithShards(2)}, func(t *testing.T, s settings) {
			require.Zero(t, s.exportTimeout, "no export timeout")
			require.Zero(t, s.batchTimeout, "export at once")
		}, 0},
		{"a zero duration for logs", logKind, map[string]string{
			EnvBLRPExportTimeout: "0", EnvBLRPScheduleDelay: "0",
		}, []Option{WithShards(2)}, func(t *testing.T, s settings) {
			require.Equal(t, DefaultExportTimeout, s.exportTimeout)
			require.Equal(t, DefaultLogBatchTimeout, s.batchTimeout)
		}, 2},
		{"negative durations are reported and ignored", spanKind, map[string]string{
			EnvBSPExportTimeout: "-1", EnvBSPScheduleDelay: "-5",
		}, []Option{WithShards(2)}, func(t *testing.T, s settings) {
			require.Equal(t, DefaultExportTimeout, s.exportTimeout)
			require.Equal(t, DefaultBatchTimeout, s.batchTimeout)
		}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, key := range []string{EnvBSPMaxQueueSize, EnvBSPMaxExportBatchSize, EnvBSPExportTimeout, EnvBSPScheduleDelay,
				EnvBLRPMaxQueueSize, EnvBLRPMaxExportBatchSize, EnvBLRPExportTimeout, EnvBLRPScheduleDelay} {
				t.Setenv(key, tt.env[key])
			}
			errs := handled(t)
			s, err := configure(tt.kind, tt.opts)
			require.NoError(t, err)
			tt.want(t, s)
			require.Len(t, errs(), tt.handled, "errors handed to otel.Handle: %v", errs())
		})
	}
}

// TestAQueueFromTheEnvironmentThatTheShardsCannotTakeIsReportedAndIgnored:
// the SDK never fails on a variable, and neither does New: a queue from
// OTEL_BSP_MAX_QUEUE_SIZE below the shard count of WithShards, or past a
// ring's limit over the shards, is reported to otel.Handle and ignored,
// as a value that is not an integer is. (The same value given as the
// option is an error: see TestBadOptionsAreErrorsThatNameTheOptionAndTheValue.)
func TestAQueueFromTheEnvironmentThatTheShardsCannotTakeIsReportedAndIgnored(t *testing.T) {
	for _, tc := range []struct {
		value string
		opts  []Option
		want  string
	}{
		{"3", []Option{WithShards(4)}, "OTEL_BSP_MAX_QUEUE_SIZE=3 is below WithShards(4)"},
		{strconv.Itoa(sink.MaxRingCapacity + 1), []Option{WithShards(1)}, "more than sink.MaxRingCapacity"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			t.Setenv(EnvBSPMaxQueueSize, tc.value)
			errs := handled(t)
			s, err := configure(spanKind, tc.opts)
			require.NoError(t, err)
			require.Equal(t, DefaultQueuePerShard, s.perShard, "the default queue applies")
			require.Len(t, errs(), 1)
			require.ErrorContains(t, errs()[0], tc.want)
			require.ErrorContains(t, errs()[0], "ignored")
		})
	}
}
