package frontpage

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardedsink/shardedsink/internal/benchtxt"
)

var update = flag.Bool("update", false, "rewrite README.md's generated blocks from the committed runs")

const readme = "../../README.md"

// contendedRow is what the front page reads of a bench/contended row.
type contendedRow struct {
	Impl         string  `json:"impl"`
	Producers    int     `json:"producers"`
	Consumers    string  `json:"consumers"`
	PayloadBytes int     `json:"payload_bytes"`
	Throughput   float64 `json:"throughput_per_s"`
	P99          float64 `json:"p99_ns"`
	DropPct      float64 `json:"drop_pct"`
}

// contendedAt64 reads the held, 8-byte rows at 64 producers of the last
// committed bench/contended run, by impl.
func contendedAt64(t *testing.T) map[string]contendedRow {
	t.Helper()
	paths, err := filepath.Glob("../contended/runs/run-*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no committed bench/contended run: %v", err)
	}
	data, err := os.ReadFile(paths[len(paths)-1])
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Rows []contendedRow `json:"rows"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	out := map[string]contendedRow{}
	for _, r := range res.Rows {
		if r.Consumers == "held" && r.PayloadBytes == 8 && r.Producers == 64 {
			out[r.Impl] = r
		}
	}
	return out
}

// benchRun parses an integration's committed bench.txt.
func benchRun(t *testing.T, path string) map[string]map[string][]float64 {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	run, err := benchtxt.Parse(raw)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return run.Values
}

// median is the median of one metric of one benchmark; the test fails when
// the run has none, so a renamed benchmark cannot leave a stale line.
func median(t *testing.T, values map[string]map[string][]float64, bench, unit string) float64 {
	t.Helper()
	xs := values[bench][unit]
	if len(xs) == 0 {
		t.Fatalf("the committed run has no %s for %s", unit, bench)
	}
	return benchtxt.Median(xs)
}

// crashRuns reads natssink's committed crash probe (testdata/crash.sh):
// how many runs it holds and in how many nothing failed, was dropped or was
// stored twice, and the stream held every acked value.
func crashRuns(t *testing.T, path string) (runs, clean int) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, "pushed=") {
			continue
		}
		kv := map[string]string{}
		for _, f := range strings.Fields(line) {
			k, v, _ := strings.Cut(f, "=")
			kv[k] = v
		}
		runs++
		if kv["failed"] == "0" && kv["dropped"] == "0" && kv["stored_twice"] == "0" && kv["acked"] == kv["stream_msgs"] && kv["acked"] == kv["pushed"] {
			clean++
		}
	}
	if runs == 0 {
		t.Fatalf("%s holds no run of the crash probe", path)
	}
	return runs, clean
}

func TestTheReadmesMeasuredLinesAreTheCommittedRuns(t *testing.T) {
	c := contendedAt64(t)
	sink, ch, xs := c["sharded-push"], c["single-chan"], c["xsync"]
	if sink.Throughput == 0 || ch.Throughput == 0 || xs.Throughput == 0 {
		t.Fatal("the committed contended run lacks sharded-push, single-chan or xsync at 64 producers")
	}
	otel := benchRun(t, "../../otelsink/testdata/bench.txt")
	slog := benchRun(t, "../../slogsink/testdata/bench.txt")
	nats := benchRun(t, "../../natssink/testdata/bench.txt")

	var compared strings.Builder
	fmt.Fprintf(&compared, "- **A buffered channel with `select`-`default`**: at 64 producers the sink moves %.1fx its pushes per second, "+
		"with a p99 %.0fx lower.\n",
		sink.Throughput/ch.Throughput, ch.P99/sink.P99)
	fmt.Fprintf(&compared, "- **xsync's `MPMCQueue`**: `TryEnqueue` gives up on a lost race (%.0f %% of pushes refused by a queue that "+
		"never filled); the sink moves %.1fx its accepted pushes per second.\n",
		xs.DropPct, sink.Throughput/xs.Throughput)
	bspCPU := median(t, otel, "BenchmarkOnEndThreads/exporter=noop/g=64/impl=bsp", "cpu-ns/span")
	ourCPU := median(t, otel, "BenchmarkOnEndThreads/exporter=noop/g=64/impl=otelsink", "cpu-ns/span")
	bspShare := median(t, otel, "BenchmarkExportedShare/g=1/impl=bsp", "exported-%")
	ourShare := median(t, otel, "BenchmarkExportedShare/g=1/impl=otelsink", "exported-%")
	bspShare64 := median(t, otel, "BenchmarkOnEndThreads/exporter=noop/g=64/impl=bsp", "exported-%")
	ourShare64 := median(t, otel, "BenchmarkOnEndThreads/exporter=noop/g=64/impl=otelsink", "exported-%")
	fmt.Fprintf(&compared, "- **The OpenTelemetry SDK's `BatchSpanProcessor`**: otelsink takes its options; under a burst from one "+
		"goroutine it exports %.1f %% of the spans, the SDK's %.1f %%; from 64 (`OnEnd` on spans made once) %.1f %% against %.1f %%, "+
		"at %.2fx the SDK's CPU per span (its producers park for the drain worker where the SDK's drops).\n",
		ourShare, bspShare, ourShare64, bspShare64, ourCPU/bspCPU)
	zap := benchRun(t, "../../zapsink/testdata/bench.txt")
	zl := benchRun(t, "../../zerologsink/testdata/bench.txt")
	const stalled, file = "BenchmarkStalledPipe/logger=", "BenchmarkFile/logger="
	const at64 = "/goroutines=64"
	fmt.Fprintf(&compared, "- **zap's `BufferedWriteSyncer`** blocks the caller while its destination is stalled "+
		"(64 goroutines, a pipe stalled for 1 s of 2: a call took up to %.2f s), where zapsink's core returned within %.0f ms and "+
		"counted what it shed; into a healthy file from 64 goroutines both write every record, zapsink's core %.2fx as many "+
		"per second (%.1fx zap's synchronous core's).\n",
		median(t, zap, stalled+"zap-BufferedWriteSyncer", "max-call-ns")/1e9, median(t, zap, stalled+"zapsink-Core", "max-call-ns")/1e6,
		median(t, zap, file+"zapsink-Core"+at64, "written/s")/median(t, zap, file+"zap-BufferedWriteSyncer"+at64, "written/s"),
		median(t, zap, file+"zapsink-Core"+at64, "written/s")/median(t, zap, file+"zap-AddSync"+at64, "written/s"))
	fmt.Fprintf(&compared, "- **zerolog's `diode.NewWriter`** never blocks either, but loses silently: into a healthy file from 64 "+
		"goroutines %.1f %% of its calls reached it, the loss not in the log; zerologsink wrote every record, %.1fx as many per "+
		"second as zerolog writing at once, and idles at %.2f %% of a core, the diode's poller at %.2f %%.\n",
		median(t, zl, file+"zerolog-diode"+at64, "%reached"),
		median(t, zl, file+"zerologsink"+at64, "written/s")/median(t, zl, file+"zerolog"+at64, "written/s"),
		median(t, zl, "BenchmarkIdle/logger=zerologsink", "%core-idle"), median(t, zl, "BenchmarkIdle/logger=zerolog-diode", "%core-idle"))

	var integrations strings.Builder
	fmt.Fprintf(&integrations, "Measured against what each replaces ([docs/benchmarks.md](docs/benchmarks.md)):\n\n")
	ratio := func(records, unit string) float64 {
		return median(t, slog, "BenchmarkHTTP/records="+records+"/handler=slogsink", unit) /
			median(t, slog, "BenchmarkHTTP/records="+records+"/handler=sync", unit)
	}
	lost := max(median(t, slog, "BenchmarkHTTP/records=8/handler=slogsink", "%lost"), median(t, slog, "BenchmarkHTTP/records=32/handler=slogsink", "%lost"))
	fmt.Fprintf(&integrations, "- slogsink: an HTTP server logging 8 or 32 JSON records per request into a file serves %.2fx or %.2fx the requests "+
		"of slog's JSON handler writing at once, at %.2fx or %.2fx its p99, %.0f %% of records lost.\n",
		ratio("8", "req/s"), ratio("32", "req/s"), ratio("8", "p99-ms"), ratio("32", "p99-ms"), lost)
	fmt.Fprintf(&integrations, "- otelsink: `OnEnd` at 64 goroutines exports %.1f %% of the spans, the SDK's `BatchSpanProcessor` %.1f %%, "+
		"at %.2fx its CPU per span.\n", ourShare64, bspShare64, ourCPU/bspCPU)
	natsAcked := median(t, nats, "BenchmarkProducers/impl=natssink", "acked/s")
	pubAcked := median(t, nats, "BenchmarkProducers/impl=publish", "acked/s")
	asyncAcked := median(t, nats, "BenchmarkProducers/impl=publishasync-msgid", "acked/s")
	runs, clean := crashRuns(t, "../../natssink/testdata/crash.txt")
	fmt.Fprintf(&integrations, "- natssink: 64 producers get %.1fx the acked values per second of producers that call `js.Publish`, "+
		"and %.2fx those that call `js.PublishAsync` with a `Nats-Msg-Id` each; with its default Config, through a SIGKILL of the "+
		"stream leader it was connected to (16 producers at 20,000 values/s, a 3 s outage), %d of %d runs lost nothing "+
		"(none failed, dropped or stored twice).\n", natsAcked/pubAcked, natsAcked/asyncAcked, clean, runs)

	for _, b := range []struct{ name, text string }{{"compared", compared.String()}, {"integrations", integrations.String()}} {
		if err := benchtxt.SyncBlock(readme, b.name, b.text, *update); err != nil {
			t.Error(err)
		}
	}
}
