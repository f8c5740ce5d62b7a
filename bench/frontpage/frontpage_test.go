package frontpage

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/bench/internal/report"
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
	CoreNs       float64 `json:"core_ns_per_op"`
}

// headlineRows are the rows of the committed bench/contended headline run
// that the README's table shows: the run of median sink cost at 64
// producers (the lower of an even count), as bench/contended's medianRun
// chooses it.
func headlineRows(t *testing.T) []contendedRow {
	t.Helper()
	paths, err := filepath.Glob("../contended/runs/run-*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no committed bench/contended run: %v", err)
	}
	type run struct {
		rows []contendedRow
		ns   float64
	}
	var runs []run
	for _, p := range paths {
		rows := contendedRows(t, p)
		for _, r := range rows {
			if r.Impl == "sharded-push" && r.Consumers == "held" && r.PayloadBytes == 8 && r.Producers == 64 {
				runs = append(runs, run{rows, r.CoreNs})
			}
		}
	}
	if len(runs) == 0 {
		t.Fatal("no committed bench/contended run has the sink at 64 producers")
	}
	slices.SortStableFunc(runs, func(a, b run) int { return cmp.Compare(a.ns, b.ns) })
	return runs[(len(runs)-1)/2].rows
}

// contendedRows reads the rows of one bench/contended JSON run.
func contendedRows(t *testing.T, path string) []contendedRow {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Rows []contendedRow `json:"rows"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return res.Rows
}

// contendedAt64 reads the held, 8-byte rows at 64 producers of the
// committed bench/contended run that the README's table shows, by impl.
func contendedAt64(t *testing.T) map[string]contendedRow {
	t.Helper()
	out := map[string]contendedRow{}
	for _, r := range headlineRows(t) {
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

// nearPlacement is the cores' round trip (core-rt-ns) below which a file
// run drew the VM's near placement of its two cores: about 60 ns, against
// 300 to 450 ns in the far one, where every logger writes fewer records
// per second (docs/benchmarks.md, "zapsink").
const nearPlacement = 150

// fileRatio is a's written/s over b's in one file row of a logger run,
// round by round: bench.sh runs its probes in rounds, every logger once a
// round, so a's run i and b's run i are under a minute apart and drew the
// machine's state of that moment. It is the median of the ratios of the
// rounds in which both runs drew the near placement, when some did, of all
// the rounds otherwise; how says which, for the line, and gives the far
// side too: the median of the rounds far for both, or where to read it.
func fileRatio(t *testing.T, values map[string]map[string][]float64, a, b string) (ratio float64, how string) {
	t.Helper()
	wa, wb := values[a]["written/s"], values[b]["written/s"]
	ra, rb := values[a]["core-rt-ns"], values[b]["core-rt-ns"]
	if len(wa) == 0 || len(wa) != len(wb) || len(ra) != len(wa) || len(rb) != len(wb) {
		t.Fatalf("the committed run has %d and %d runs of written/s, %d and %d of core-rt-ns, for %s and %s: rounds need one of each per round",
			len(wa), len(wb), len(ra), len(rb), a, b)
	}
	var near, far, all []float64
	for i := range wa {
		r := wa[i] / wb[i]
		all = append(all, r)
		switch {
		case ra[i] < nearPlacement && rb[i] < nearPlacement:
			near = append(near, r)
		case ra[i] >= nearPlacement && rb[i] >= nearPlacement:
			far = append(far, r)
		}
	}
	// The far side, where the sink loses more than the syncer: its own
	// figure when some round drew it for both, a pointer otherwise.
	farSide := "cores placed far apart, it writes less: docs/benchmarks.md"
	if len(far) > 0 {
		farSide = fmt.Sprintf("%.2fx in the %d placed far", benchtxt.Median(far), len(far))
	}
	if len(near) == 0 {
		return benchtxt.Median(all), fmt.Sprintf("median of %d rounds, none with the cores placed near; %s", len(all), farSide)
	}
	return benchtxt.Median(near), fmt.Sprintf("median of the %d rounds of %d with the VM's cores placed near; %s",
		len(near), len(all), farSide)
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

// pair is two shares, ours first: "both 100.0 %" when they print alike.
func pair(ours, theirs float64) string {
	a, b := fmt.Sprintf("%.1f %%", ours), fmt.Sprintf("%.1f %%", theirs)
	if a == b {
		return "both " + a
	}
	return a + " and " + b
}

// overlaps reports whether the min-max ranges of two metrics' runs overlap,
// which makes their medians' ratio a tie.
func overlaps(t *testing.T, values map[string]map[string][]float64, a, b, unit string) bool {
	t.Helper()
	xs, ys := values[a][unit], values[b][unit]
	if len(xs) == 0 || len(ys) == 0 {
		t.Fatalf("the committed run has no %s for %s or %s", unit, a, b)
	}
	return slices.Min(xs) <= slices.Max(ys) && slices.Min(ys) <= slices.Max(xs)
}

// TestTheReadmesMeasuredLinesAreTheCommittedRuns renders the README's "use
// this instead of" list and the integrations block of docs/benchmarks.md
// from the committed runs. Each line gives both sides: where the rival
// wins a row (a call's cost, records written, plain PublishAsync's rate),
// that row is on the line too.
func TestTheReadmesMeasuredLinesAreTheCommittedRuns(t *testing.T) {
	c := contendedAt64(t)
	sink, ch := c["sharded-push"], c["single-chan"]
	if sink.Throughput == 0 || ch.Throughput == 0 {
		t.Fatal("the committed contended run lacks sharded-push or single-chan at 64 producers")
	}
	otel := benchRun(t, "../../otelsink/testdata/bench.txt")
	slog := benchRun(t, "../../slogsink/testdata/bench.txt")
	nats := benchRun(t, "../../natssink/testdata/bench.txt")
	zap := benchRun(t, "../../zapsink/testdata/bench.txt")
	zl := benchRun(t, "../../zerologsink/testdata/bench.txt")

	drained := map[string]contendedRow{}
	for _, r := range contendedRows(t, "../contended/runs/tables.json") {
		if r.Consumers == "draining" && r.PayloadBytes == 8 && r.Producers == 64 {
			drained[r.Impl] = r
		}
	}
	defaults, chDrained := drained["sharded-push-defaults"], drained["single-chan"]
	if defaults.Throughput == 0 || chDrained.Throughput == 0 {
		t.Fatal("the committed contended tables lack sharded-push-defaults or single-chan draining at 64 producers")
	}

	var compared strings.Builder
	fmt.Fprintf(&compared, "- **A buffered channel** (`select` with `default`), for values many goroutines hand off: "+
		"at 64 producers, rings holding the round, the sink moved %.1fx its pushes/s, p99 %.0fx lower. "+
		"Cost: on every default, both drained, %.2fx; no order across producers (a `Handle` keeps its own).\n",
		sink.Throughput/ch.Throughput, ch.P99/sink.P99, defaults.Throughput/chDrained.Throughput)

	const stalled, file, discard = "BenchmarkStalledPipe/logger=", "BenchmarkFile/logger=", "BenchmarkDiscard/logger="
	const at64 = "/goroutines=64"
	zapFile, zapFileHow := fileRatio(t, zap, file+"zapsink-Core"+at64, file+"zap-BufferedWriteSyncer"+at64)
	// The healthy file is a gain or a cost, as the ratio falls.
	fileLine := fmt.Sprintf("writes %.2fx the syncer's records/s to a healthy file (%s)", zapFile, zapFileHow)
	gain, cost := "", fileLine+"; "
	if zapFile >= 1 {
		gain, cost = ", and "+fileLine, ""
	}
	fmt.Fprintf(&compared, "- **zap's `BufferedWriteSyncer`**, if a stalled destination must not stall callers: 64 goroutines, "+
		"a pipe stalled 1 s of 2, its calls took up to %.2f s, zapsink's %.0f ms%s. Cost: zapsink shed meanwhile (%.1f %% reached the "+
		"reader, the syncer's %.0f %%), %sa call costs %.2fx zap's.\n",
		median(t, zap, stalled+"zap-BufferedWriteSyncer", "max-call-ns")/1e9, median(t, zap, stalled+"zapsink-Core", "max-call-ns")/1e6,
		gain, median(t, zap, stalled+"zapsink-Core", "%reached"), median(t, zap, stalled+"zap-BufferedWriteSyncer", "%reached"),
		cost, median(t, zap, discard+"zapsink-Core", "ns/op")/median(t, zap, discard+"zap", "ns/op"))
	fmt.Fprintf(&compared, "- **zerolog's diode**, if losses must be counted: to a healthy file from 64 goroutines %.1f %% of its "+
		"calls arrived, uncounted; zerologsink's %.0f %%, %.1fx zerolog's synchronous rate. "+
		"Cost: a call costs %.2fx zerolog's.\n",
		median(t, zl, file+"zerolog-diode"+at64, "%reached"), median(t, zl, file+"zerologsink"+at64, "%reached"),
		median(t, zl, file+"zerologsink"+at64, "written/s")/median(t, zl, file+"zerolog"+at64, "written/s"),
		median(t, zl, discard+"zerologsink", "ns/op")/median(t, zl, discard+"zerolog", "ns/op"))

	const onEnd64 = "BenchmarkOnEndThreads/exporter=noop/g=64/impl="
	bspCPU, ourCPU := median(t, otel, onEnd64+"bsp", "cpu-ns/span"), median(t, otel, onEnd64+"otelsink", "cpu-ns/span")
	bspShare, ourShare := median(t, otel, "BenchmarkExportedShare/g=1/impl=bsp", "exported-%"), median(t, otel, "BenchmarkExportedShare/g=1/impl=otelsink", "exported-%")
	bspShare64, ourShare64 := median(t, otel, onEnd64+"bsp", "exported-%"), median(t, otel, onEnd64+"otelsink", "exported-%")
	fmt.Fprintf(&compared, "- **OpenTelemetry's `BatchSpanProcessor`**, if bursts must not lose spans: `OnEnd` from 64 goroutines "+
		"exported %.1f %%, the SDK's %.1f %% (from 1, %s). Cost: %.2fx the SDK's CPU per span there (callers "+
		"wait for the drain worker).\n",
		ourShare64, bspShare64, pair(ourShare, bspShare), ourCPU/bspCPU)

	const producers = "BenchmarkProducers/impl="
	natsAcked := median(t, nats, producers+"natssink", "acked/s")
	tie := ""
	if overlaps(t, nats, producers+"natssink", producers+"publishasync-msgid", "acked/s") {
		tie = " (the ranges overlap)"
	}
	nats16 := benchRun(t, "../../natssink/testdata/bench-16core.txt")
	nats16Acked := median(t, nats16, producers+"natssink", "acked/s")
	fmt.Fprintf(&compared, "- **`js.PublishAsync`**, if producers must not wait for acks, nor a retry store twice: natssink, "+
		"rings holding the burst, acked %.2fx the values/s of `PublishAsync` with a `Nats-Msg-Id`%s; default rings dropped "+
		"%.1f %%. Cost: plain `PublishAsync` (a retry may store twice) acked %.2fx natssink's. On 16 cores (one run, "+
		"docs/benchmarks.md) natssink acked %.2fx and %.2fx theirs.\n",
		natsAcked/median(t, nats, producers+"publishasync-msgid", "acked/s"), tie,
		median(t, nats, producers+"natssink-default-rings", "drop-%"), median(t, nats, producers+"publishasync", "acked/s")/natsAcked,
		nats16Acked/median(t, nats16, producers+"publishasync-msgid", "acked/s"), nats16Acked/median(t, nats16, producers+"publishasync", "acked/s"))

	var integrations strings.Builder
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
	runs, clean := crashRuns(t, "../../natssink/testdata/crash.txt")
	fmt.Fprintf(&integrations, "- natssink: 64 producers, with rings that hold the burst, get %.1fx the acked values per second of producers "+
		"that call `js.Publish`, and %.2fx those that call `js.PublishAsync` with a `Nats-Msg-Id` each%s; plain `js.PublishAsync` "+
		"(no id) gets %.2fx natssink's, and natssink with its default rings dropped %.1f %% of that burst. With its default Config, through a SIGKILL of the stream leader it was connected to "+
		"(16 producers at 20,000 values/s, a 3 s outage), %d of %d runs lost nothing (none failed, dropped or stored twice).\n",
		natsAcked/median(t, nats, producers+"publish", "acked/s"), natsAcked/median(t, nats, producers+"publishasync-msgid", "acked/s"), tie,
		median(t, nats, producers+"publishasync", "acked/s")/natsAcked, median(t, nats, producers+"natssink-default-rings", "drop-%"), clean, runs)

	// The front page's lines are wrapped (README.md keeps its lines short);
	// docs/benchmarks.md's block is not.
	var wrapped strings.Builder
	for _, item := range strings.SplitAfter(compared.String(), "\n") {
		if item != "" {
			wrapped.WriteString(report.Wrap(strings.TrimSuffix(item, "\n"), report.FrontPageWidth, "  ") + "\n")
		}
	}
	for _, b := range []struct{ path, name, text string }{
		{readme, "compared", wrapped.String()},
		{"../../docs/benchmarks.md", "integrations", integrations.String()},
	} {
		if err := benchtxt.SyncBlock(b.path, b.name, b.text, *update); err != nil {
			t.Error(err)
		}
	}
}

// channelRatios reads bench/channels/RESULTS.md's "this" column (the
// median mpmc/chan ratio of the tree that committed it) by case.
func channelRatios(t *testing.T) map[string]float64 {
	t.Helper()
	raw, err := os.ReadFile("../channels/RESULTS.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(raw), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 7 || !strings.HasSuffix(strings.TrimSpace(cells[4]), "x") {
			continue
		}
		var x float64
		if _, err := fmt.Sscanf(strings.TrimSpace(cells[4]), "%gx", &x); err != nil {
			t.Fatalf("bench/channels/RESULTS.md: %q: %v", line, err)
		}
		out[strings.TrimSpace(cells[1])] = x
	}
	return out
}

// spanOf is the smallest and largest ratio of the cases whose names start
// with one of prefixes, as the README writes them: "0.43x to 0.68x".
func spanOf(t *testing.T, ratios map[string]float64, prefixes ...string) string {
	t.Helper()
	var xs []float64
	for c, x := range ratios {
		for _, p := range prefixes {
			if strings.HasPrefix(c, p) {
				xs = append(xs, x)
			}
		}
	}
	if len(xs) == 0 {
		t.Fatalf("bench/channels/RESULTS.md has no case starting with %v", prefixes)
	}
	return fmt.Sprintf("%.2fx to %.2fx", slices.Min(xs), slices.Max(xs))
}

// channelCost is what README.md and mpmc's package doc say of mpmc's cost
// against a Go channel, rendered from bench/channels/RESULTS.md, their one
// source: the span of the single-goroutine rows and that of the rows with
// four goroutines a side.
func channelCost(t *testing.T, ratios map[string]float64) string {
	t.Helper()
	return fmt.Sprintf("%s a Go channel's from one goroutine, %s with 4 senders and 4 receivers",
		spanOf(t, ratios, "ping-", "burst-"), spanOf(t, ratios, "mpmc-4x4-"))
}

// TestTheChannelFiguresAreBenchChannelsResults keeps the two places that
// give mpmc's cost against a Go channel, README.md's prose and
// mpmc/doc.go's package comment, in step with bench/channels/RESULTS.md:
// both must say channelCost's sentence, and the package doc also the
// highest ratio of any case, so that neither can claim figures of another
// run. The test fails with the sentence to paste.
func TestTheChannelFiguresAreBenchChannelsResults(t *testing.T) {
	ratios := channelRatios(t)
	cost := channelCost(t, ratios)

	raw, err := os.ReadFile(readme)
	require.NoError(t, err)
	want := "A send or receive costs " + cost
	require.True(t, strings.Contains(strings.Join(strings.Fields(string(raw)), " "), want),
		"README.md does not say %q (bench/channels/RESULTS.md)", want)

	f, err := parser.ParseFile(token.NewFileSet(), "../../mpmc/doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	require.NoError(t, err)
	require.NotNil(t, f.Doc, "mpmc/doc.go has no package comment")
	want = fmt.Sprintf("%s, and at most %.2fx in any case of the table", cost, slices.Max(slices.Collect(maps.Values(ratios))))
	require.True(t, strings.Contains(strings.Join(strings.Fields(f.Doc.Text()), " "), want),
		"mpmc/doc.go's package comment does not say %q (bench/channels/RESULTS.md)", want)
}

// TestTheReadmesProseFiguresAreTheCommittedRuns checks the figures the
// README's prose gives outside the generated blocks: the sink's core-ns at
// 4 and 256 producers in the headline run (what 2 cores can show) and its
// throughput against one shared ring's in the run on 16 cores (mpmc's
// figures: TestTheChannelFiguresAreBenchChannelsResults).
func TestTheReadmesProseFiguresAreTheCommittedRuns(t *testing.T) {
	raw, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(raw)), " ")

	coreNs := map[int]float64{}
	for _, r := range headlineRows(t) {
		if r.Impl == "sharded-push" && r.Consumers == "held" && r.PayloadBytes == 8 {
			coreNs[r.Producers] = r.CoreNs
		}
	}
	if coreNs[4] == 0 || coreNs[256] == 0 {
		t.Fatal("the committed headline run lacks sharded-push at 4 or 256 producers")
	}
	want := fmt.Sprintf("the sink's %s core-ns at 4 producers and %s at 256", report.Sig3(coreNs[4]), report.Sig3(coreNs[256]))
	if !strings.Contains(text, want) {
		t.Errorf("README.md does not say %q (the bench/contended run the table shows)", want)
	}

	want = originalAndGoals(t)
	if !strings.Contains(text, want) {
		t.Errorf("README.md does not say %q (docs/benchmarks.md, the decision table)", want)
	}

	held16 := map[string]contendedRow{}
	for _, r := range contendedRows(t, "../contended/runs-16core/held.json") {
		if r.Consumers == "held" && r.PayloadBytes == 8 && r.Producers == 64 {
			held16[r.Impl] = r
		}
	}
	if held16["sharded-push"].Throughput == 0 || held16["single-vyukov"].Throughput == 0 {
		t.Fatal("the committed 16-core run lacks sharded-push or single-vyukov at 64 producers")
	}
	want = fmt.Sprintf("Measured once on 16 cores, at 64 producers it moved %.0fx the pushes/s of one shared ring",
		held16["sharded-push"].Throughput/held16["single-vyukov"].Throughput)
	if !strings.Contains(text, want) {
		t.Errorf("README.md does not say %q (bench/contended/runs-16core/held.json)", want)
	}

}

// originalAndGoals is what README.md says of the decision table's verdict,
// from docs/benchmarks.md (generated by bench/contended): the original's
// ratio of the sharded sink to one shared ring that this run does not
// reproduce, and how many of the table's goals were missed.
func originalAndGoals(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../../docs/benchmarks.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	const row = "| sharded sink (Sink.Push, CPU homes) / single shared ring |"
	i := strings.Index(doc, row)
	if i < 0 {
		t.Fatalf("docs/benchmarks.md has no row %q", row)
	}
	cells := strings.Split(strings.TrimSpace(doc[i:i+strings.Index(doc[i:], "\n")]), "|")
	ratio := regexp.MustCompile(`= ([0-9.]+x)`)
	original, ours := ratio.FindStringSubmatch(cells[2]), ratio.FindStringSubmatch(cells[4])
	if original == nil || ours == nil {
		t.Fatalf("docs/benchmarks.md: the row %q has no ratios in its original and core-ns cells", row)
	}
	const goals = "### Goals (held consumers, 8-byte payload)"
	j := strings.Index(doc, goals)
	if j < 0 {
		t.Fatalf("docs/benchmarks.md has no %q", goals)
	}
	section := doc[j+len(goals):]
	section = section[:strings.Index(section, "\n#")]
	missed := strings.Count(section, ": **missed**")
	return fmt.Sprintf("the original's %s a shared ring's cost is not reproduced (%s); %d goals missed", original[1], ours[1], missed)
}
