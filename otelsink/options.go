package otelsink

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"

	"github.com/shardedsink/shardedsink/sink"
)

// Defaults of the options. The batch size, the export timeout and the batch
// timeouts are the SDK's (sdktrace.DefaultMaxExportBatchSize,
// DefaultExportTimeout and DefaultScheduleDelay; the log BatchProcessor's
// 1 s export interval).
const (
	// DefaultQueuePerShard is the default queue capacity of each shard of a
	// SpanProcessor. A goroutine pushes into its home ring and, when that is
	// full, the next one: with 1,024 spans per ring, one goroutine alone
	// can fill 2,048 slots, the BatchSpanProcessor's whole queue. With the
	// processor's default shard count, [DefaultShardsPerP] (4) per P, the
	// default total is 4,096 spans per GOMAXPROCS: 8,192 on a 2-core
	// machine, at most 32,768 (32 shards). A slot holds the span's interface
	// value (16 bytes) and the ring's 8-byte sequence number.
	DefaultQueuePerShard = 1024
	// DefaultLogQueuePerShard is the default queue capacity of each shard
	// of a LogProcessor, which has [DefaultLogShardsPerP] shards per P by
	// default (at most [DefaultLogMaxShards]): one goroutine alone can fill
	// 2,048 slots, the log BatchProcessor's whole queue, and the total is
	// 2,048 records per GOMAXPROCS. A slot holds a whole sdklog.Record (584
	// bytes with go1.26 on amd64) and is allocated up front: a shard's ring
	// takes about 600 KB, 2.4 MB on a 2-core machine, at most 9.7 MB.
	DefaultLogQueuePerShard = 1024
	// DefaultShardsPerP and DefaultMaxShards give a SpanProcessor's
	// default shard count, DefaultShardsPerP × GOMAXPROCS clamped to [1,
	// DefaultMaxShards]: the sink's default with stack homes, on every
	// platform, so that the default queue does not depend on whether the
	// CPU number can be read (not sink.DefaultShards).
	DefaultShardsPerP = 4
	DefaultMaxShards  = 32
	// DefaultLogShardsPerP and DefaultLogMaxShards give a LogProcessor's
	// default shard count, DefaultLogShardsPerP × GOMAXPROCS clamped to [1,
	// DefaultLogMaxShards]: half the span processor's, with rings twice as
	// long, for the same memory. A record's OnEmit is dominated by copying
	// the record, not by contention for a ring.
	DefaultLogShardsPerP = 2
	DefaultLogMaxShards  = 16
	// DefaultMaxExportBatchSize is the most items handed to one export
	// call, the SDK's default.
	DefaultMaxExportBatchSize = 512
	// DefaultExportTimeout bounds each export call, the SDK's default.
	DefaultExportTimeout = 30 * time.Second
	// DefaultBatchTimeout is the span processor's batch timeout, the
	// BatchSpanProcessor's (OTEL_BSP_SCHEDULE_DELAY's default).
	DefaultBatchTimeout = 5 * time.Second
	// DefaultLogBatchTimeout is the log processor's batch timeout, the log
	// BatchProcessor's export interval (OTEL_BLRP_SCHEDULE_DELAY's default).
	DefaultLogBatchTimeout = time.Second
)

// The environment variables read by [New] (OTEL_BSP_*) and [NewLog]
// (OTEL_BLRP_*) for the options not given, as the SDK's batch processors
// read them. Durations are in milliseconds.
const (
	EnvBSPScheduleDelay       = "OTEL_BSP_SCHEDULE_DELAY"
	EnvBSPExportTimeout       = "OTEL_BSP_EXPORT_TIMEOUT"
	EnvBSPMaxQueueSize        = "OTEL_BSP_MAX_QUEUE_SIZE"
	EnvBSPMaxExportBatchSize  = "OTEL_BSP_MAX_EXPORT_BATCH_SIZE"
	EnvBLRPScheduleDelay      = "OTEL_BLRP_SCHEDULE_DELAY"
	EnvBLRPExportTimeout      = "OTEL_BLRP_EXPORT_TIMEOUT"
	EnvBLRPMaxQueueSize       = "OTEL_BLRP_MAX_QUEUE_SIZE"
	EnvBLRPMaxExportBatchSize = "OTEL_BLRP_MAX_EXPORT_BATCH_SIZE"
)

// ErrInvalidOption is wrapped by every error that [New] and [NewLog] return
// for a bad option value (and by the panics of [NewSpanProcessor] and
// [NewLogProcessor]). Each such error names the option and the value; when
// several are bad, all are reported and errors.Is(err, ErrInvalidOption)
// holds for the joined error.
var ErrInvalidOption = errors.New("otelsink: invalid option")

// Option configures a [SpanProcessor] or a [LogProcessor]; every option
// means the same for both. Options are applied in order; a later option of
// the same kind overrides an earlier one. A bad value is reported by [New]
// as an error and by [NewSpanProcessor] as a panic, never silently corrected
// (except that the batch size is clamped to the queue size, as the log
// BatchProcessor clamps it).
type Option func(*config)

// LogOption is Option: the log processor takes the same options.
type LogOption = Option

// config is the options as given, before validation.
type config struct {
	name          string
	queueSize     int // 0: the kind's default per shard × shards
	queueSet      bool
	batchSize     int
	batchSet      bool
	exportTimeout time.Duration
	timeoutSet    bool
	batchTimeout  time.Duration
	batchTOSet    bool
	shards        int // 0: the sink's default
	shardsSet     bool
	idle          sink.IdleMode
	meterProvider metric.MeterProvider
	meterSet      bool
	logger        *slog.Logger
	onOverload    func(sink.Overload)
	overloadEvery time.Duration
	overloadSet   bool
}

// WithMaxQueueSize sets the total number of items the processor buffers,
// like sdktrace.WithMaxQueueSize and sdklog.WithMaxQueueSize. It is split
// evenly over the shards (rounded down to a multiple of the shard count;
// QueueCapacity reports the result); an item that finds its shard's ring and
// the ones sink.Sink.Push tries after it full is dropped and counted (with
// CPU homes and more shards than CPUs, the default, that is every ring, and
// a burst of 7/8 of the size from 64 goroutines is held). When
// [WithShards] is not given and size is below the default shard count, the
// shard count becomes size.
// size must be at least 1, at least the shard count given to WithShards, and
// at most sink.MaxRingCapacity per shard. Default: OTEL_BSP_MAX_QUEUE_SIZE
// (OTEL_BLRP_MAX_QUEUE_SIZE for logs) when set and within those bounds (a
// value outside them is reported to otel.Handle and ignored, as the SDK
// never fails on a variable), else [DefaultQueuePerShard]
// ([DefaultLogQueuePerShard] for logs) per shard.
func WithMaxQueueSize(size int) Option {
	return func(c *config) { c.queueSize, c.queueSet = size, true }
}

// WithMaxExportBatchSize sets the most items handed to one export call,
// like sdktrace.WithMaxExportBatchSize and sdklog.WithExportMaxBatchSize,
// whatever the shard count: the drain workers assemble one export batch
// from all the shards, allocated up front (a span takes 16 bytes in it, a
// log record 584). It must be at least 1, and is clamped to the queue size
// (QueueCapacity). Default:
// OTEL_BSP_MAX_EXPORT_BATCH_SIZE (OTEL_BLRP_MAX_EXPORT_BATCH_SIZE) when set,
// else [DefaultMaxExportBatchSize].
func WithMaxExportBatchSize(size int) Option {
	return func(c *config) { c.batchSize, c.batchSet = size, true }
}

// WithExportTimeout bounds each export call, like sdktrace.WithExportTimeout
// and sdklog.WithExportTimeout: the ctx given to the exporter has this
// timeout on top of the drain worker's ctx. Zero means no timeout of its own
// (as in the BatchSpanProcessor); a negative value is invalid. Default:
// OTEL_BSP_EXPORT_TIMEOUT (OTEL_BLRP_EXPORT_TIMEOUT) when set, else
// [DefaultExportTimeout].
func WithExportTimeout(timeout time.Duration) Option {
	return func(c *config) { c.exportTimeout, c.timeoutSet = timeout, true }
}

// WithBatchTimeout sets the longest an item waits for its batch to fill,
// like sdktrace.WithBatchTimeout and sdklog.WithExportInterval: the export
// batch, which the drain workers of all the shards fill, goes to the
// exporter when it holds [WithMaxExportBatchSize] items or this long after
// its first item arrived, whichever comes first, so that a trickle makes
// about one export per timeout, as with the SDK's processors. Zero exports
// whatever a worker takes at once; a negative value is invalid.
// ForceFlush and Shutdown export at once whatever the timeout. Default:
// OTEL_BSP_SCHEDULE_DELAY (OTEL_BLRP_SCHEDULE_DELAY) when set, else
// [DefaultBatchTimeout] for spans and [DefaultLogBatchTimeout] for logs.
func WithBatchTimeout(timeout time.Duration) Option {
	return func(c *config) { c.batchTimeout, c.batchTOSet = timeout, true }
}

// WithShards sets the number of rings, each with its own drain worker
// (sink.Config.Shards). It must be in [1, sink.MaxShards]. Default: for
// spans [DefaultShardsPerP] × GOMAXPROCS clamped to [1,
// DefaultMaxShards]; for logs [DefaultLogShardsPerP] × GOMAXPROCS clamped
// to [1, DefaultLogMaxShards].
func WithShards(n int) Option {
	return func(c *config) { c.shards, c.shardsSet = n, true }
}

// WithIdleMode sets what an idle drain worker does (sink.Config.Idle):
// sink.IdleWake (default) parks it until an item arrives; sink.IdlePoll polls.
func WithIdleMode(m sink.IdleMode) Option {
	return func(c *config) { c.idle = m }
}

// WithMeterProvider makes the processor report its self-observability
// metrics (see the package documentation) through mp instead of the global
// MeterProvider. After Shutdown the processed counts are still reported
// (the queue's size and capacity no longer are), as the SDK's processors'
// are, without the MeterProvider keeping the processor. mp must not be
// nil.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.meterProvider, c.meterSet = mp, true }
}

// WithLogger sets the logger of the processor and of the sink under it: it
// receives the default overload reports, the reports of exporter panics and
// the report of a panic in the sink. Default: slog.Default() at the time of
// each report. A nil logger means the default.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithOverloadReport replaces the default overload report (an Error record
// through the logger) with fn, called by the sink's monitor at most once
// every interval when items were dropped since its last check. A zero
// interval means the sink's default, 5 s; a negative one is invalid. fn nil
// keeps the default report at the given interval.
func WithOverloadReport(interval time.Duration, fn func(sink.Overload)) Option {
	return func(c *config) { c.overloadEvery, c.onOverload, c.overloadSet = interval, fn, true }
}

// WithName names the processor: the sink's name in overload reports and
// the otel.component.name attribute of its metrics. Default "otelsink/N"
// for spans and "otelsink_log/N" for logs, with N counting the processors
// made by this process from 0.
func WithName(name string) Option {
	return func(c *config) { c.name = name }
}

// kind is what differs between the span and the log processor's settings.
type kind struct {
	namePrefix   string
	perShard     int // the default queue per shard
	shardsPerP   int // the default shard count per GOMAXPROCS...
	maxShards    int // ...clamped to [1, maxShards]
	batchTimeout time.Duration
	envQueue     string
	envBatch     string
	envTimeout   string
	envDelay     string
	// zeroDuration: a zero duration in the environment is taken (the
	// BatchSpanProcessor takes any integer); else it is ignored like the log
	// BatchProcessor ignores values below 1.
	zeroDuration bool
	// componentType is the otel.component.type attribute of the metrics.
	componentType string
	metrics       metricNames
}

// settings is a config after validation and defaults.
type settings struct {
	name          string
	shards        int
	perShard      int
	batchSize     int
	exportTimeout time.Duration
	batchTimeout  time.Duration
	idle          sink.IdleMode
	overloadEvery time.Duration
	onOverload    func(sink.Overload)
	meterProvider metric.MeterProvider // nil: the global one (see registerMetrics)
	logger        *slog.Logger         // nil: slog.Default() at each report
}

// configure applies opts, then the environment variables for the options not
// given, validates and applies the defaults.
func configure(k kind, opts []Option) (settings, error) {
	var c config
	var errs []error
	for i, o := range opts {
		if o == nil {
			errs = append(errs, fmt.Errorf("%w: option %d is nil", ErrInvalidOption, i))
			continue
		}
		o(&c)
	}
	c.fromEnv(k)
	st, err := c.settle(k)
	if err != nil {
		errs = append(errs, err)
	}
	return st, errors.Join(errs...)
}

// fromEnv fills the options not given from the environment, as the SDK's
// batch processors do: options take precedence; a value that is not an
// integer is reported to otel.Handle and ignored, and so is an integer this
// processor cannot take (below 1; a negative duration, or a zero one for
// logs), where the log BatchProcessor ignores it too and the
// BatchSpanProcessor would run with it.
func (c *config) fromEnv(k kind) {
	intVar := func(key string, minimum int) (int, bool) {
		v := os.Getenv(key)
		if v == "" {
			return 0, false
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			otel.Handle(fmt.Errorf("otelsink: invalid %s value %q, ignored: %w", key, v, err))
			return 0, false
		}
		if n < minimum {
			otel.Handle(fmt.Errorf("otelsink: invalid %s value %q: must be at least %d, ignored", key, v, minimum))
			return 0, false
		}
		return n, true
	}
	minDur := 1
	if k.zeroDuration {
		minDur = 0
	}
	if !c.queueSet {
		if n, ok := intVar(k.envQueue, 1); ok {
			if why := c.unfitQueue(k, n); why != "" {
				otel.Handle(fmt.Errorf("otelsink: invalid %s value %q: %s, ignored", k.envQueue, strconv.Itoa(n), why))
			} else {
				c.queueSize, c.queueSet = n, true
			}
		}
	}
	if !c.batchSet {
		c.batchSize, c.batchSet = intVar(k.envBatch, 1)
	}
	if !c.timeoutSet {
		ms, ok := intVar(k.envTimeout, minDur)
		c.exportTimeout, c.timeoutSet = time.Duration(ms)*time.Millisecond, ok
	}
	if !c.batchTOSet {
		ms, ok := intVar(k.envDelay, minDur)
		c.batchTimeout, c.batchTOSet = time.Duration(ms)*time.Millisecond, ok
	}
}

// unfitQueue says why a queue of n items from the environment cannot be
// taken with the shard count that WithShards gave or that follows from n,
// or returns "": the SDK never fails on a variable, so such a value is
// reported and ignored, where the same value given as the option is an
// error. A shard count that is itself invalid is settle's to report.
func (c config) unfitQueue(k kind, n int) string {
	if c.shardsSet && (c.shards < 1 || c.shards > sink.MaxShards) {
		return ""
	}
	if c.shardsSet && n < c.shards {
		return fmt.Sprintf("%s=%d is below WithShards(%d): every shard needs at least one slot", k.envQueue, n, c.shards)
	}
	shards := c.shardCount(k, n)
	if n/shards > sink.MaxRingCapacity {
		return fmt.Sprintf("over %d shards that is %d items per shard, more than sink.MaxRingCapacity (%d)",
			shards, n/shards, sink.MaxRingCapacity)
	}
	return ""
}

// shardCount is the shard count: WithShards's, else the kind's default,
// lowered to queue when that is given (queue > 0) and smaller.
func (c config) shardCount(k kind, queue int) int {
	if c.shardsSet {
		return c.shards
	}
	shards := min(max(k.shardsPerP*runtime.GOMAXPROCS(0), 1), k.maxShards)
	if queue > 0 {
		shards = min(shards, queue)
	}
	return shards
}

// settle validates c and applies the defaults. The error joins one error per
// bad option, each wrapping ErrInvalidOption and naming the option and value.
// It checks every bound that sink.New checks, before anything is allocated.
func (c config) settle(k kind) (settings, error) {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidOption}, args...)...))
	}
	queueName := fmt.Sprintf("WithMaxQueueSize(%d)", c.queueSize)
	if c.queueSet && c.queueSize < 1 {
		bad("WithMaxQueueSize(%d): must be at least 1", c.queueSize)
	}
	if c.batchSet && c.batchSize < 1 {
		bad("WithMaxExportBatchSize(%d): must be at least 1", c.batchSize)
	}
	if c.timeoutSet && c.exportTimeout < 0 {
		bad("WithExportTimeout(%v): must be positive, or zero for no timeout", c.exportTimeout)
	}
	if c.batchTOSet && c.batchTimeout < 0 {
		bad("WithBatchTimeout(%v): must be positive, or zero to export at once", c.batchTimeout)
	}
	if c.shardsSet && c.shards < 1 {
		bad("WithShards(%d): must be at least 1", c.shards)
	}
	if c.shardsSet && c.shards > sink.MaxShards {
		bad("WithShards(%d): must be at most sink.MaxShards (%d)", c.shards, sink.MaxShards)
	}
	if c.shardsSet && c.queueSet && c.shards >= 1 && c.queueSize >= 1 && c.queueSize < c.shards {
		bad("%s is below WithShards(%d): every shard needs at least one slot", queueName, c.shards)
	}
	if c.idle != sink.IdleWake && c.idle != sink.IdlePoll {
		bad("WithIdleMode(%v): must be sink.IdleWake or sink.IdlePoll", c.idle)
	}
	if c.meterSet && c.meterProvider == nil {
		bad("WithMeterProvider(nil): give a MeterProvider, or leave the option out")
	}
	if c.overloadSet && c.overloadEvery < 0 {
		bad("WithOverloadReport(%v, ...): the interval must be positive, or zero for the default 5s", c.overloadEvery)
	}
	if len(errs) > 0 {
		return settings{}, errors.Join(errs...)
	}
	shards := c.shardCount(k, c.queueSize) // queueSize is 0 when not given
	if c.queueSet && c.queueSize/shards > sink.MaxRingCapacity {
		return settings{}, fmt.Errorf("%w: %s: over %d shards that is %d items per shard, more than sink.MaxRingCapacity (%d)",
			ErrInvalidOption, queueName, shards, c.queueSize/shards, sink.MaxRingCapacity)
	}

	s := settings{
		name:          c.name,
		shards:        shards,
		perShard:      k.perShard,
		batchSize:     DefaultMaxExportBatchSize,
		exportTimeout: DefaultExportTimeout,
		batchTimeout:  k.batchTimeout,
		idle:          c.idle,
		overloadEvery: c.overloadEvery,
		onOverload:    c.onOverload,
		meterProvider: c.meterProvider,
		logger:        c.logger,
	}
	if s.name == "" {
		s.name = fmt.Sprintf("%s/%d", k.namePrefix, processorID.Add(1)-1)
	}
	if c.queueSet {
		s.perShard = c.queueSize / s.shards
	}
	if c.batchSet {
		s.batchSize = c.batchSize
	}
	s.batchSize = min(s.batchSize, s.perShard*s.shards)
	if c.timeoutSet {
		s.exportTimeout = c.exportTimeout
	}
	if c.batchTOSet {
		s.batchTimeout = c.batchTimeout
	}
	return s, nil
}

// sinkConfig is the sink's configuration for s.
func sinkConfig[T any](s settings) sink.Config[T] {
	return sink.Config[T]{
		Name:             s.name,
		Shards:           s.shards,
		RingCapacity:     s.perShard,
		BatchSize:        s.batchSize,
		OverloadInterval: s.overloadEvery,
		OnOverload:       s.onOverload,
		Logger:           s.logger,
		Idle:             s.idle,
		// A worker hands what it takes to the export batch at once: the
		// batch timeout is the export batch's (batch.go), one for all the
		// shards, not each worker's (sink.Config.MaxDelay).
	}
}
