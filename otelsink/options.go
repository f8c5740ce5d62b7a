package otelsink

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/shardedsink/shardedsink/sink"
)

// Defaults of the options. The batch size and the export timeout are the
// BatchSpanProcessor's (sdktrace.DefaultMaxExportBatchSize and
// DefaultExportTimeout); the queue is the BatchSpanProcessor's whole queue
// (2,048 spans) for every P.
const (
	// DefaultQueuePerShard is the default queue capacity of each shard. With
	// the sink's default shard count, sink.DefaultShardsPerP (4) per P, the
	// default total is 2,048 spans per GOMAXPROCS: 4,096 on a 2-core
	// machine, at most 16,384 (32 shards).
	DefaultQueuePerShard = 512
	// DefaultMaxExportBatchSize is the most spans handed to one
	// ExportSpans call, the BatchSpanProcessor's default.
	DefaultMaxExportBatchSize = 512
	// DefaultExportTimeout bounds each ExportSpans call, the
	// BatchSpanProcessor's default.
	DefaultExportTimeout = 30 * time.Second
)

// ErrInvalidOption is wrapped by every error that [New] returns for a bad
// option value (and by the panic of [NewSpanProcessor]). Each such error
// names the option and the value; when several are bad, all are reported and
// errors.Is(err, ErrInvalidOption) holds for the joined error.
var ErrInvalidOption = errors.New("otelsink: invalid option")

// Option configures a [SpanProcessor]. Options are applied in order; a later
// option of the same kind overrides an earlier one. A bad value is reported
// by [New] as an error and by [NewSpanProcessor] as a panic, never silently
// corrected (except that the batch size is clamped to a shard's capacity, as
// the BatchSpanProcessor clamps it to its queue).
type Option func(*config)

// config is the options as given, before validation.
type config struct {
	name          string
	queueSize     int // 0: DefaultQueuePerShard × shards
	queueSet      bool
	batchSize     int
	batchSet      bool
	exportTimeout time.Duration
	timeoutSet    bool
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

// WithMaxQueueSize sets the total number of spans the processor buffers,
// like sdktrace.WithMaxQueueSize. It is split evenly over the shards
// (rounded down to a multiple of the shard count; [SpanProcessor.QueueCapacity]
// reports the result); a span that finds its shard's ring and the next one
// full is dropped and counted. When [WithShards] is not given and size is
// below the default shard count, the shard count becomes size. size must be
// at least 1, at least the shard count given to WithShards, and at most
// sink.MaxRingCapacity per shard. Default:
// [DefaultQueuePerShard] per shard.
func WithMaxQueueSize(size int) Option {
	return func(c *config) { c.queueSize, c.queueSet = size, true }
}

// WithMaxExportBatchSize sets the most spans handed to one ExportSpans
// call, like sdktrace.WithMaxExportBatchSize. It must be at least 1, and is
// clamped to a shard's capacity. Default [DefaultMaxExportBatchSize]. Unlike
// the BatchSpanProcessor there is no batch timeout: a drain worker exports
// whatever its shard holds as soon as it finds it, so batches are short
// under light load.
func WithMaxExportBatchSize(size int) Option {
	return func(c *config) { c.batchSize, c.batchSet = size, true }
}

// WithExportTimeout bounds each ExportSpans call, like
// sdktrace.WithExportTimeout: the ctx given to the exporter has this timeout
// on top of the drain worker's ctx. Zero means no timeout of its own (as in
// the BatchSpanProcessor); a negative value is invalid. Default
// [DefaultExportTimeout].
func WithExportTimeout(timeout time.Duration) Option {
	return func(c *config) { c.exportTimeout, c.timeoutSet = timeout, true }
}

// WithShards sets the number of rings, each with its own drain worker
// (sink.Config.Shards). It must be in [1, sink.MaxShards]. Default: the sink's,
// sink.DefaultShardsPerP × GOMAXPROCS clamped to [1, sink.DefaultMaxShards].
func WithShards(n int) Option {
	return func(c *config) { c.shards, c.shardsSet = n, true }
}

// WithIdleMode sets what an idle drain worker does (sink.Config.Idle):
// sink.IdleWake (default) parks it until a span arrives; sink.IdlePoll polls.
func WithIdleMode(m sink.IdleMode) Option {
	return func(c *config) { c.idle = m }
}

// WithMeterProvider makes the processor report its dropped spans as the
// Int64ObservableCounter "otelsink.spans.dropped" (unit "{span}") of the
// meter "github.com/shardedsink/shardedsink/otelsink", with the attribute
// otel.component.name set to the processor's name. The callback is
// unregistered by Shutdown. mp must not be nil.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.meterProvider, c.meterSet = mp, true }
}

// WithLogger sets the logger of the sink under the processor: it receives
// the default overload reports and the report of a panic in the sink.
// Default: slog.Default() at the time of each report. A nil logger means
// the default.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithOverloadReport replaces the default overload report (an Error record
// through the logger) with fn, called by the sink's monitor at most once
// every interval when spans were dropped since its last check. A zero
// interval means the sink's default, 5 s; a negative one is invalid. fn nil
// keeps the default report at the given interval.
func WithOverloadReport(interval time.Duration, fn func(sink.Overload)) Option {
	return func(c *config) { c.overloadEvery, c.onOverload, c.overloadSet = interval, fn, true }
}

// WithName names the processor: the sink's name in overload reports and
// the otel.component.name attribute of its metric. Default "otelsink/N",
// with N counting the processors made by this process from 0.
func WithName(name string) Option {
	return func(c *config) { c.name = name }
}

// settings is a config after validation and defaults.
type settings struct {
	name          string
	shards        int
	perShard      int
	batchSize     int
	exportTimeout time.Duration
	sink          sink.Config[spanT]
	meterProvider metric.MeterProvider
	logger        *slog.Logger // nil: slog.Default() at each report
}

// settle validates c and applies the defaults. The error joins one error per
// bad option, each wrapping ErrInvalidOption and naming the option and value.
func (c config) settle(id int64) (settings, error) {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidOption}, args...)...))
	}
	if c.queueSet && c.queueSize < 1 {
		bad("WithMaxQueueSize(%d): must be at least 1", c.queueSize)
	}
	if c.batchSet && c.batchSize < 1 {
		bad("WithMaxExportBatchSize(%d): must be at least 1", c.batchSize)
	}
	if c.timeoutSet && c.exportTimeout < 0 {
		bad("WithExportTimeout(%v): must be positive, or zero for no timeout", c.exportTimeout)
	}
	if c.shardsSet && c.shards < 1 {
		bad("WithShards(%d): must be at least 1", c.shards)
	}
	if c.shardsSet && c.shards > sink.MaxShards {
		bad("WithShards(%d): must be at most sink.MaxShards (%d)", c.shards, sink.MaxShards)
	}
	if c.shardsSet && c.queueSet && c.shards >= 1 && c.queueSize >= 1 && c.queueSize < c.shards {
		bad("WithMaxQueueSize(%d) is below WithShards(%d): every shard needs at least one slot", c.queueSize, c.shards)
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
	shards := c.shards
	if !c.shardsSet {
		shards = min(max(sink.DefaultShardsPerP*runtime.GOMAXPROCS(0), 1), sink.DefaultMaxShards)
		if c.queueSet {
			shards = min(shards, c.queueSize)
		}
	}
	if c.queueSet && c.queueSize/shards > sink.MaxRingCapacity {
		return settings{}, fmt.Errorf("%w: WithMaxQueueSize(%d): over %d shards that is %d spans per shard, more than sink.MaxRingCapacity (%d)",
			ErrInvalidOption, c.queueSize, shards, c.queueSize/shards, sink.MaxRingCapacity)
	}

	s := settings{
		name:          c.name,
		batchSize:     DefaultMaxExportBatchSize,
		exportTimeout: DefaultExportTimeout,
		meterProvider: c.meterProvider,
		logger:        c.logger,
		shards:        shards,
	}
	if s.name == "" {
		s.name = fmt.Sprintf("otelsink/%d", id)
	}
	s.perShard = DefaultQueuePerShard
	if c.queueSet {
		s.perShard = c.queueSize / s.shards
	}
	if c.batchSet {
		s.batchSize = c.batchSize
	}
	s.batchSize = min(s.batchSize, s.perShard)
	if c.timeoutSet {
		s.exportTimeout = c.exportTimeout
	}
	s.sink = sink.Config[spanT]{
		Name:             s.name,
		Shards:           s.shards,
		RingCapacity:     s.perShard,
		BatchSize:        s.batchSize,
		OverloadInterval: c.overloadEvery,
		OnOverload:       c.onOverload,
		Logger:           c.logger,
		Idle:             c.idle,
	}
	return s, nil
}
