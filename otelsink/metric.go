package otelsink

import (
	"context"
	"fmt"
	"os"
	"strings"

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

// registerMetrics creates the processor's instruments and registers the one
// callback that observes them from Stats at each collection: nothing is
// recorded on OnEnd or OnEmit. It uses the MeterProvider of
// WithMeterProvider, else the global one when the SDK's observability switch
// is on, else registers nothing.
func (c *core[T]) registerMetrics(k kind) error {
	mp := c.cfg.meterProvider
	if mp == nil {
		if !observabilityEnabled() {
			return nil
		}
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter(ScopeName)
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
		attribute.String("otel.component.name", c.cfg.name),
		attribute.String("otel.component.type", k.componentType),
	}
	with := func(errorType string) metric.ObserveOption {
		return metric.WithAttributeSet(attribute.NewSet(append(base[:len(base):len(base)], attribute.String("error.type", errorType))...))
	}
	plain := metric.WithAttributeSet(attribute.NewSet(base...))
	queueFull, exportFailed, shutdown := with(ErrorTypeQueueFull), with(ErrorTypeExportFailed), with(ErrorTypeShutdown)
	c.reg, err = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		st := c.stats()
		full := st.Sink.Dropped
		o.ObserveInt64(processed, int64(st.Exported), plain)
		o.ObserveInt64(processed, int64(full), queueFull)
		o.ObserveInt64(processed, int64(st.Failed), exportFailed)
		o.ObserveInt64(processed, int64(st.Dropped-full), shutdown)
		o.ObserveInt64(size, int64(st.Queued), plain)
		o.ObserveInt64(capacity, int64(st.Capacity), plain)
		return nil
	}, processed, size, capacity)
	if err != nil {
		return fmt.Errorf("otelsink: registering the metrics callback: %w", err)
	}
	return nil
}
