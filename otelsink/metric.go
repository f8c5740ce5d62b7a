package otelsink

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// ScopeName is the instrumentation scope (meter name) of the processor's
// metrics.
const ScopeName = "github.com/shardedsink/shardedsink/otelsink"

// DroppedMetric is the name of the Int64ObservableCounter of dropped spans
// (see [WithMeterProvider]).
const DroppedMetric = "otelsink.spans.dropped"

// registerMetrics creates the dropped-spans counter and registers the
// callback that observes Dropped at each collection.
func (p *SpanProcessor) registerMetrics(mp metric.MeterProvider) error {
	m := mp.Meter(ScopeName)
	dropped, err := m.Int64ObservableCounter(DroppedMetric,
		metric.WithUnit("{span}"),
		metric.WithDescription("Sampled spans ended and never handed to the exporter: "+
			"their rings were full, or they were ended after Shutdown."))
	if err != nil {
		return fmt.Errorf("otelsink: WithMeterProvider: creating %s: %w", DroppedMetric, err)
	}
	attrs := metric.WithAttributeSet(attribute.NewSet(attribute.String("otel.component.name", p.cfg.name)))
	p.reg, err = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		o.ObserveInt64(dropped, int64(p.Dropped()), attrs)
		return nil
	}, dropped)
	if err != nil {
		return fmt.Errorf("otelsink: WithMeterProvider: registering the callback of %s: %w", DroppedMetric, err)
	}
	return nil
}
