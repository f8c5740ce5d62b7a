package otelsink_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/shardedsink/shardedsink/otelsink"
)

// countingLogExporter counts the records it exports.
type countingLogExporter struct{ exported atomic.Int64 }

func (e *countingLogExporter) Export(_ context.Context, records []sdklog.Record) error {
	e.exported.Add(int64(len(records)))
	return nil
}
func (*countingLogExporter) ForceFlush(context.Context) error { return nil }
func (*countingLogExporter) Shutdown(context.Context) error   { return nil }

// finishLog shuts p down and reports the exported and dropped shares of the
// emitted records; for otelsink it checks that every record is accounted
// for. The BatchProcessor exposes no drop count: its dropped share is
// emitted minus exported.
func finishLog(b *testing.B, p sdklog.Processor, exp *countingLogExporter, emitted int64) {
	b.Helper()
	b.StopTimer()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.Shutdown(ctx); err != nil {
		b.Fatalf("Shutdown: %v", err)
	}
	exported := exp.exported.Load()
	dropped := emitted - exported
	if lp, ok := p.(*otelsink.LogProcessor); ok {
		st := lp.Stats()
		if int64(st.Exported) != exported || int64(st.Exported+st.Failed+st.Dropped) != emitted {
			b.Errorf("otelsink lost count: emitted %d, exporter saw %d, stats %+v", emitted, exported, st)
		}
		dropped = int64(st.Dropped)
	}
	b.ReportMetric(100*float64(exported)/float64(emitted), "exported-%")
	b.ReportMetric(100*float64(dropped)/float64(emitted), "dropped-%")
}
