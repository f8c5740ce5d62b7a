package otelsink_test

// What the exporter receives from each processor under a steady load and a
// trickle, with the same options: the export calls, their mean and largest
// size, and the calls per batch timeout. The loads run in testing/synctest
// bubbles, so the clock is fake for both processors (the
// BatchSpanProcessor's timer too): the durations are exact, the runs take
// no real time, and the figures are the same on every machine. The table
// in README.md is this test's output:
//
//	go test -run TestExportBatchesAgainstTheBSP -update .   # rewrite README.md's table

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/shardedsink/shardedsink/internal/benchtxt"
	"github.com/shardedsink/shardedsink/otelsink"
)

var update = flag.Bool("update", false, "rewrite the generated tables in README.md")

// The options of both processors, the issue's: queue 2,048, batches of up to
// 512, batch timeout 200 ms; otelsink with 32 shards (its default with
// GOMAXPROCS 8).
const (
	loadQueue   = 2048
	loadBatch   = 512
	loadTimeout = 200 * time.Millisecond
	loadShards  = 32
	loadLength  = 2 * time.Second
)

// load is a number of goroutines ending spans at a total rate, each at an
// even pace, their starts spread over one period. Goroutine g starts (g+1) µs
// later still, so that no two spans end at the same instant and none ends
// at the instant a batch timeout fires (a multiple of the 10 ms between
// spans of the trickle): events at one instant of fake time run in an
// order the figures would depend on.
type load struct {
	name       string
	goroutines int
	perSecond  int
}

var loads = []load{
	{"steady", 8, 20_000},
	{"trickle", 16, 100},
}

// batchFigures is what the exporter saw during one load.
type batchFigures struct {
	calls, spans, largest int
}

func (f batchFigures) mean() float64 { return float64(f.spans) / float64(f.calls) }

// callsPerTimeout is the export calls per batch timeout of the run.
func (f batchFigures) callsPerTimeout() float64 {
	return float64(f.calls) / float64(loadLength/loadTimeout)
}

// runLoad ends spans into p at l's pace for loadLength of fake time, then
// shuts p down, and returns what the exporter received, Shutdown's final
// exports included.
func runLoad(t *testing.T, l load, p sdktrace.SpanProcessor, exp *batchRecorder) batchFigures {
	t.Helper()
	period := time.Duration(int64(time.Second) * int64(l.goroutines) / int64(l.perSecond))
	each := int(loadLength / period)
	span := stub(0, true)
	var wg sync.WaitGroup
	for g := range l.goroutines {
		wg.Go(func() {
			time.Sleep(period*time.Duration(g)/time.Duration(l.goroutines) + time.Duration(g+1)*time.Microsecond)
			for range each {
				p.OnEnd(span)
				time.Sleep(period)
			}
		})
	}
	wg.Wait()
	require.NoError(t, p.Shutdown(context.Background()))
	sizes, _ := exp.calls()
	f := batchFigures{calls: len(sizes)}
	for _, n := range sizes {
		f.spans += n
		f.largest = max(f.largest, n)
	}
	require.Equal(t, l.goroutines*each, f.spans, "every span ended was exported")
	return f
}

// loadImpls are the two processors with the same options.
var loadImpls = []struct {
	name string
	make func(sdktrace.SpanExporter) sdktrace.SpanProcessor
}{
	{"BatchSpanProcessor", func(e sdktrace.SpanExporter) sdktrace.SpanProcessor {
		return sdktrace.NewBatchSpanProcessor(e, sdktrace.WithMaxQueueSize(loadQueue),
			sdktrace.WithMaxExportBatchSize(loadBatch), sdktrace.WithBatchTimeout(loadTimeout))
	}},
	{"otelsink", func(e sdktrace.SpanExporter) sdktrace.SpanProcessor {
		return otelsink.NewSpanProcessor(e, otelsink.WithShards(loadShards), otelsink.WithMaxQueueSize(loadQueue),
			otelsink.WithMaxExportBatchSize(loadBatch), otelsink.WithBatchTimeout(loadTimeout))
	}},
}

// TestExportBatchesAgainstTheBSP runs each load through both processors,
// checks the goals (steady: otelsink's mean batch at least 0.9 times the
// BSP's; trickle: at most 1.5 times the BSP's export calls), and checks
// that README.md's table is this run's (with -update, rewrites it).
func TestExportBatchesAgainstTheBSP(t *testing.T) {
	var table strings.Builder
	table.WriteString("| load | processor | export calls | mean batch | largest | calls per timeout |\n")
	table.WriteString("|---|---|---:|---:|---:|---:|\n")
	got := map[string]map[string]batchFigures{}
	for _, l := range loads {
		got[l.name] = map[string]batchFigures{}
		for i, im := range loadImpls {
			var f batchFigures
			t.Run(l.name+"/"+im.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					exp := &batchRecorder{}
					f = runLoad(t, l, im.make(exp), exp)
				})
			})
			got[l.name][im.name] = f
			label := ""
			if i == 0 {
				label = fmt.Sprintf("%s, %d goroutines, %s spans/s", l.name, l.goroutines, thousands(l.perSecond))
			}
			fmt.Fprintf(&table, "| %s | %s | %d | %.1f | %d | %.1f |\n",
				label, im.name, f.calls, f.mean(), f.largest, f.callsPerTimeout())
		}
	}
	t.Logf("\n%s", table.String())
	if t.Failed() {
		return
	}
	steady, trickle := got["steady"], got["trickle"]
	require.GreaterOrEqual(t, steady["otelsink"].mean(), 0.9*steady["BatchSpanProcessor"].mean(),
		"steady load: otelsink's mean batch is at least 0.9 times the BSP's")
	require.LessOrEqual(t, float64(trickle["otelsink"].calls), 1.5*float64(trickle["BatchSpanProcessor"].calls),
		"trickle: otelsink makes at most 1.5 times the BSP's export calls")
	requireGenerated(t, "README.md", "batches", table.String())
}

// requireGenerated checks that the block named name in the file at path
// (between "<!-- name:begin ... -->" and "<!-- name:end -->") is want;
// with -update it rewrites the block instead.
func requireGenerated(t *testing.T, path, name, want string) {
	t.Helper()
	require.NoError(t, benchtxt.SyncBlock(path, name, want, *update))
}

// thousands formats n with commas: 20,000.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
