package otelsink_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/shardedsink/shardedsink/otelsink"
	"github.com/shardedsink/shardedsink/sink"
)

func TestBadOptionsAreErrorsThatNameTheOptionAndTheValue(t *testing.T) {
	tests := []struct {
		name string
		exp  sdktrace.SpanExporter
		opts []otelsink.Option
		want []string
	}{
		{"queue size zero", newTestExporter(), []otelsink.Option{otelsink.WithMaxQueueSize(0)}, []string{"WithMaxQueueSize(0)"}},
		{"negative queue size", newTestExporter(), []otelsink.Option{otelsink.WithMaxQueueSize(-5)}, []string{"WithMaxQueueSize(-5)"}},
		{"batch size zero", newTestExporter(), []otelsink.Option{otelsink.WithMaxExportBatchSize(0)}, []string{"WithMaxExportBatchSize(0)"}},
		{"negative export timeout", newTestExporter(), []otelsink.Option{otelsink.WithExportTimeout(-time.Second)}, []string{"WithExportTimeout(-1s)"}},
		{"shards zero", newTestExporter(), []otelsink.Option{otelsink.WithShards(0)}, []string{"WithShards(0)"}},
		{"queue below shards", newTestExporter(), []otelsink.Option{otelsink.WithShards(4), otelsink.WithMaxQueueSize(3)}, []string{"WithMaxQueueSize(3) is below WithShards(4)"}},
		{"unknown idle mode", newTestExporter(), []otelsink.Option{otelsink.WithIdleMode(sink.IdleMode(7))}, []string{"WithIdleMode(IdleMode(7))"}},
		{"nil meter provider", newTestExporter(), []otelsink.Option{otelsink.WithMeterProvider(nil)}, []string{"WithMeterProvider(nil)"}},
		{"negative overload interval", newTestExporter(), []otelsink.Option{otelsink.WithOverloadReport(-time.Minute, nil)}, []string{"WithOverloadReport(-1m0s, ...)"}},
		{"nil exporter", nil, nil, []string{"exporter = nil"}},
		{"nil option", newTestExporter(), []otelsink.Option{otelsink.WithShards(1), nil}, []string{"option 1 is nil"}},
		{"every bad value at once", nil, []otelsink.Option{otelsink.WithMaxQueueSize(-1), otelsink.WithShards(-2), otelsink.WithMaxExportBatchSize(-3)},
			[]string{"exporter = nil", "WithMaxQueueSize(-1)", "WithShards(-2)", "WithMaxExportBatchSize(-3)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := otelsink.New(tt.exp, tt.opts...)
			require.Nil(t, p)
			require.ErrorIs(t, err, otelsink.ErrInvalidOption)
			for _, w := range tt.want {
				require.ErrorContains(t, err, w)
			}
			require.PanicsWithError(t, err.Error(), func() { otelsink.NewSpanProcessor(tt.exp, tt.opts...) },
				"NewSpanProcessor panics with New's error")
		})
	}
}

func TestGoodOptionsAreAccepted(t *testing.T) {
	mp := sdkmetric.NewMeterProvider()
	defer func() { require.NoError(t, mp.Shutdown(context.Background())) }()
	p, err := otelsink.New(newTestExporter(),
		otelsink.WithName("orders"),
		otelsink.WithShards(2),
		otelsink.WithMaxQueueSize(100),
		otelsink.WithMaxExportBatchSize(1000), // clamped to the queue's 100
		otelsink.WithExportTimeout(0),
		otelsink.WithIdleMode(sink.IdlePoll),
		otelsink.WithMeterProvider(mp),
		otelsink.WithLogger(nil),
		otelsink.WithOverloadReport(0, nil),
	)
	require.NoError(t, err)
	require.Equal(t, "orders", p.Name())
	require.Equal(t, 100, p.QueueCapacity())
	for i := range 60 {
		p.OnEnd(stub(i, true))
	}
	require.NoError(t, p.Shutdown(context.Background()))
	require.Equal(t, uint64(60), p.Stats().Exported+p.Dropped())
}

func TestDefaultNamesCount(t *testing.T) {
	a := otelsink.NewSpanProcessor(newTestExporter())
	b := otelsink.NewSpanProcessor(newTestExporter())
	var na, nb int
	_, err := fmt.Sscanf(a.Name(), "otelsink/%d", &na)
	require.NoError(t, err, a.Name())
	_, err = fmt.Sscanf(b.Name(), "otelsink/%d", &nb)
	require.NoError(t, err, b.Name())
	require.Greater(t, nb, na)
	require.NoError(t, errors.Join(a.Shutdown(context.Background()), b.Shutdown(context.Background())))
}

// TestAQueueVariableBelowTheShardCountIsNoError: the BatchSpanProcessor
// runs with any OTEL_BSP_MAX_QUEUE_SIZE; New and NewSpanProcessor must not
// fail (or panic) on one that WithShards leaves no slot for either.
func TestAQueueVariableBelowTheShardCountIsNoError(t *testing.T) {
	t.Setenv(otelsink.EnvBSPMaxQueueSize, "3")
	errs := recordErrors(t)
	bsp := sdktrace.NewBatchSpanProcessor(newTestExporter())
	require.NoError(t, bsp.Shutdown(context.Background()))
	p, err := otelsink.New(newTestExporter(), otelsink.WithShards(4))
	require.NoError(t, err)
	require.Equal(t, 4*otelsink.DefaultQueuePerShard, p.QueueCapacity(), "the variable is ignored")
	require.Len(t, errs.all(), 1, "and reported")
	require.NotPanics(t, func() {
		require.NoError(t, otelsink.NewSpanProcessor(newTestExporter(), otelsink.WithShards(4)).Shutdown(context.Background()))
	})
	require.NoError(t, p.Shutdown(context.Background()))
}
