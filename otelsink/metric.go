package otelsink

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"weak"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/semconv/v1.43.0/otelconv"
)

// ScopeName is the instrumentation scope (meter name) of the processors'
// metrics.
const ScopeName = "github.com/shardedsink/shardedsink/otelsink"

// The values of the error.type attribute on the processed-items counters.
const (
	ErrorTypeQueueFull    = "queue_full"    // dropped at push: the rings were full
	ErrorTypeExportFailed = "export_failed" // the export call failed (Stats.Failed)
	ErrorTypeShutdown     = "shutdown"      // emitted after Shutdown began, or left undrained by it
)

// instrument is the name, unit and description of a semantic-convention
// instrument.
type instrument struct{ name, unit, desc string }

// metricNames are the semantic-convention instruments of one processor kind.
type metricNames struct {
	processed, queueSize, queueCapacity instrument
}

var spanMetrics = metricNames{
	processed:     inst(otelconv.SDKProcessorSpanProcessed{}),
	queueSize:     inst(otelconv.SDKProcessorSpanQueueSize{}),
	queueCapacity: inst(otelconv.SDKProcessorSpanQueueCapacity{}),
}

var logMetrics = metricNames{
	processed:     inst(otelconv.SDKProcessorLogProcessed{}),
	queueSize:     inst(otelconv.SDKProcessorLogQueueSize{}),
	queueCapacity: inst(otelconv.SDKProcessorLogQueueCapacity{}),
}

func inst(i interface {
	Name() string
	Unit() string
	Description() string
}) instrument {
	return instrument{i.Name(), i.Unit(), i.Description()}
}

// observabilityEnabled reports whether the SDK's switch for its own
// self-observability metrics is on: OTEL_GO_X_OBSERVABILITY (or the older
// OTEL_GO_X_SELF_OBSERVABILITY) is "true", in any case. The first of the two
// that is set decides, as in the SDK.
func observabilityEnabled() bool {
	for _, key := range []string{"OTEL_GO_X_OBSERVABILITY", "OTEL_GO_X_SELF_OBSERVABILITY"} {
		if v := os.Getenv(key); v != "" {
			return strings.EqualFold(v, "true")
		}
	}
	return false
}

// observed is what the metrics callback reads: the processor, through a
// weak pointer, while anything else holds it; once nothing does, the counts
// the callback last read after Shutdown had finished, plus the pushes after
// Shutdown counted since (kept here, so that they outlive the processor).
// So the MeterProvider keeps reporting the processed counts after Shutdown,
// as the SDK's processed counters keep their sums until the MeterProvider's
// own last collection, without keeping the processor and its rings alive.
type observed[T any] struct {
	closedDrops uint64 // pushes after Shutdown began; first, for 64-bit atomics on 32-bit platforms
	proc        weak.Pointer[core[T]]
	last        atomic.Pointer[finalCounts]
}

// finalCounts is a processor's Stats once its Shutdown had finished, and
// the pushes after Shutdown that they count.
type finalCounts struct {
	st     Stats
	closed uint64
}

// final records c's counts once its Shutdown has finished.
func (o *observed[T]) final(c *core[T]) {
	closed := atomic.LoadUint64(&o.closedDrops)
	o.last.Store(&finalCounts{st: c.statsAt(closed), closed: closed})
}

// read returns the counts to report and whether the processor runs still
// (its Shutdown has not finished): then the queue's size and capacity are
// reported too, as by the SDK's processors until their Shutdown.
func (o *observed[T]) read() (st Stats, running, ok bool) {
	if c := o.proc.Value(); c != nil {
		closed := atomic.LoadUint64(&o.closedDrops)
		st = c.statsAt(closed)
		if atomic.LoadUint32(&c.finished) == 0 {
			return st, true, true
		}
		o.last.Store(&finalCounts{st: st, closed: closed})
		return st, false, true
	}
	f := o.last.Load()
	if f == nil {
		return Stats{}, false, false // not reached: a processor is freed only after its Shutdown has finished
	}
	st = f.st
	st.Dropped += atomic.LoadUint64(&o.closedDrops) - f.closed
	return st, false, true
}

// registerMetrics creates the processor's instruments and registers the one
// callback that observes them from Stats at each collection: nothing is
// recorded on OnEnd or OnEmit. It uses the MeterProvider of
// WithMeterProvider, else the global one when the SDK's observability switch
// is on, else registers nothing. The callback stays registered after
// Shutdown (see observed).
func (c *core[T]) registerMetrics(k kind) error {
	mp := c.cfg.meterProvider
	if mp == nil {
		if !observabilityEnabled() {
			return nil
		}
		mp = otel.GetMeterProvider()
	}
	c.obs.proc = weak.Make(c)
	return register(mp.Meter(ScopeName), k, c.cfg.name, c.obs)
}

// register is registerMetrics' work, apart from the processor: the
// callback it registers holds obs, and so the processor only weakly.
func register[T any](m metric.Meter, k kind, name string, obs *observed[T]) error {
	names := k.metrics
	processed, err := m.Int64ObservableCounter(names.processed.name,
		metric.WithUnit(names.processed.unit), metric.WithDescription(names.processed.desc))
	if err != nil {
		return fmt.Errorf("otelsink: creating %s: %w", names.processed.name, err)
	}
	size, err := m.Int64ObservableUpDownCounter(names.queueSize.name,
		metric.WithUnit(names.queueSize.unit), metric.WithDescription(names.queueSize.desc))
	if err != nil {
		return fmt.Errorf("otelsink: creating %s: %w", names.queueSize.name, err)
	}
	capacity, err := m.Int64ObservableUpDownCounter(names.queueCapacity.name,
		metric.WithUnit(names.queueCapacity.unit), metric.WithDescription(names.queueCapacity.desc))
	if err != nil {
		return fmt.Errorf("otelsink: creating %s: %w", names.queueCapacity.name, err)
	}
	base := []attribute.KeyValue{
		attribute.String("otel.component.name", name),
		attribute.String("otel.component.type", k.componentType),
	}
	with := func(errorType string) metric.ObserveOption {
		return metric.WithAttributeSet(attribute.NewSet(append(base[:len(base):len(base)], attribute.String("error.type", errorType))...))
	}
	plain := metric.WithAttributeSet(attribute.NewSet(base...))
	queueFull, exportFailed, shutdown := with(ErrorTypeQueueFull), with(ErrorTypeExportFailed), with(ErrorTypeShutdown)
	_, err = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		st, running, ok := obs.read()
		if !ok {
			return nil
		}
		o.ObserveInt64(processed, int64(st.Exported), plain)
		o.ObserveInt64(processed, int64(st.QueueFull), queueFull)
		o.ObserveInt64(processed, int64(st.Failed), exportFailed)
		o.ObserveInt64(processed, int64(st.Dropped-st.QueueFull), shutdown)
		if running {
			o.ObserveInt64(size, int64(st.Queued), plain)
			o.ObserveInt64(capacity, int64(st.Capacity), plain)
		}
		return nil
	}, processed, size, capacity)
	if err != nil {
		return fmt.Errorf("otelsink: registering the metrics callback: %w", err)
	}
	return nil
}
