package doccheck_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/bench/internal/doccheck"
)

// root is the repository, seen from this package.
const root = "../../.."

// documents are the markdown files whose commands a reader types.
var documents = []string{"README.md", "docs/*.md", "natssink/README.md"}

// how says how the test runs a documented command: as written (run ==
// "="), as a quick form that exercises the same command without its long
// measurement (-h, fewer samples, stdout instead of -o, a syntax check), or
// not at all, with the reason (skip).
type how struct {
	run  string
	skip string
}

// asWritten runs the command exactly as the documentation gives it.
var asWritten = how{run: "="}

// commands classifies every command of the documents. A command that is in
// the documents but not here fails the test, and so does an entry that no
// document has any more: the table and the documentation move together.
var commands = map[string]how{
	// README.md
	"go run ./examples/quickstart":                                           asWritten,
	"go mod edit -replace github.com/shardedsink/shardedsink=../shardedsink": {skip: "in a user's module: TestTheInstallFromAClone runs it there"},
	"go mod tidy":                       {skip: "in a user's module: TestTheInstallFromAClone runs it there"},
	"go test -race":                     {skip: "a phrase in prose (tests under -race), not a command line"},
	"bash .ci/run":                      {skip: "the CI gate itself: this test runs inside it"},
	"go test ./...":                     {skip: "the core module's tests: the CI gate runs them (under -race), and this test is one of them"},
	"go test ./bench/frontpage -update": {run: "go test -count=1 ./bench/frontpage"},

	// natssink/README.md
	"go test ./natssink/...": {run: "go test -count=1 -run '^Example$' ./natssink/"},

	// docs/design.md and docs/benchmarks.md: the contended harness
	"RUNS=3 bash bench/contended/run.sh": {run: "bash -n bench/contended/run.sh"},
	"bash bench/contended/run.sh":        {run: "bash -n bench/contended/run.sh"},
	"go run ./bench/contended":           {run: "go run ./bench/contended -q -window 2ms -round 4096 -producers 1,4 -trials 1 -impls sharded-push,single-chan -shed=false"},
	"go run ./bench/contended -h":        asWritten,
	"go run ./bench/contended -from 'bench/contended/runs/*.json' -format readme -o docs/benchmarks.md":          {run: "go run ./bench/contended -from 'bench/contended/runs/*.json' -format readme"},
	"go run ./bench/contended -from 'bench/contended/runs/*.json' -format headline -o README.md":                 {run: "go run ./bench/contended -from 'bench/contended/runs/*.json' -format headline"},
	"go run ./bench/contended -from 'bench/contended/runs-16core/*.json' -format manycore -o docs/benchmarks.md": {run: "go run ./bench/contended -from 'bench/contended/runs-16core/*.json' -format manycore"},
	"go run ./bench/contended -from 'bench/contended/runs/*.json' -format benchfmt > runs.txt":                   {run: "go run ./bench/contended -from 'bench/contended/runs/*.json' -format benchfmt > /dev/null"},
	"go run golang.org/x/perf/cmd/benchstat@latest -col /impl runs.txt":                                          {skip: "fetches benchstat from the module proxy; it reads the benchfmt that the line above writes, which runs"},
	"go run golang.org/x/perf/cmd/benchstat@latest ring.txt":                                                     {skip: "fetches benchstat from the module proxy; it reads what the ring benchmarks above write, which run"},
	"go test -run '^$' -bench . -count=10 ./ring/ > ring.txt":                                                    {run: "go test -run '^$' -bench . -benchtime 1x ./ring/ > /dev/null"},
	"go test -run '^$' -bench . -tags zenq -ldflags=-checklinkname=0 ./ring/ ./ring/zenq/":                       {run: "go test -run '^$' -bench . -benchtime 1x -tags zenq -ldflags=-checklinkname=0 ./ring/ ./ring/zenq/ > /dev/null"},
	"go test -run '^$' -bench . ./... ./bench/...":                                                               {run: "go test -run '^$' -bench . -benchtime 1x ./ring/... ./bench/usercost/... > /dev/null"},
	"go test -run '^$' -bench Idle -benchtime 1x -count 2 ./sink/":                                               asWritten,
	"go run ./bench/pushcost -o bench/pushcost/results.txt":                                                      {run: "go run ./bench/pushcost -h"},
	"go run ./bench/pushcost -from bench/pushcost/results.txt":                                                   asWritten,
	"bash bench/idle/run.sh": {run: "bash -n bench/idle/run.sh"},
	"go run ./bench/idle":    {run: "go run ./bench/idle -duration 50ms -samples 5"},
	"go run ./bench/idle -mode poll -shards 8 -producer busy":                                 {run: "go run ./bench/idle -mode poll -shards 8 -producer busy -duration 50ms -samples 5"},
	"go run ./bench/idle -format json":                                                        {run: "go run ./bench/idle -format json -duration 50ms -samples 5"},
	"go run ./bench/idle -from 'bench/idle/runs/*.json' -format readme -o docs/benchmarks.md": {run: "go run ./bench/idle -from 'bench/idle/runs/*.json' -format readme"},
	"go run ./bench/channels":                                                                 {run: "go run ./bench/channels -q -items 200 -trials 1"},
	"bash bench/channels/compare.sh OLD_CHECKOUT .":                                           {run: "bash -n bench/channels/compare.sh"},
	"bash slogsink/testdata/bench.sh":                                                         {run: "bash -n slogsink/testdata/bench.sh"},
	"bash slogsink/testdata/keepwait.sh":                                                      {run: "bash -n slogsink/testdata/keepwait.sh"},
	"bash sink/testdata/handoff.sh":                                                           {run: "bash -n sink/testdata/handoff.sh"},
	"bash slogsink/testdata/compare.sh -rounds 10 -bench 'With/records=0|InfoOnAChain'":       {run: "bash -n slogsink/testdata/compare.sh"},
	"go test -run TestAFloodOfLargeRecordsIsBoundedInBytes -v ./slogsink/":                    asWritten,
	"bash otelsink/testdata/bench.sh":                                                         {run: "bash -n otelsink/testdata/bench.sh"},
	"bash mpmc/testdata/ready-bench.sh":                                                       {run: "bash -n mpmc/testdata/ready-bench.sh"},
	"bash bench/channels/compare.sh -rounds 6 -trials 7 -run cap16 OLD .":                     {run: "bash -n bench/channels/compare.sh"},
	"bash zapsink/testdata/bench.sh":                                                          {run: "bash -n zapsink/testdata/bench.sh"},
	"bash zerologsink/testdata/bench.sh":                                                      {run: "bash -n zerologsink/testdata/bench.sh"},
	"bash natssink/testdata/bench.sh":                                                         {run: "bash -n natssink/testdata/bench.sh"},
	"bash promsink/testdata/bench.sh":                                                         {run: "bash -n promsink/testdata/bench.sh"},
	"go run ./bench/pushcost":                                                                 {run: "go run ./bench/pushcost -count 1 -benchtime 1000x"},
	"bash bench/pushcost/budget.sh":                                                           {run: "bash -n bench/pushcost/budget.sh"},
	"go test -run '^$' -bench CPU ./internal/machine/":                                        {run: "go test -run '^$' -bench CPU -benchtime 1x ./internal/machine/"},
	"go test -run '^$' -bench Idle -benchtime 1x ./sink/":                                     asWritten,
	"go test -run '^$' -bench All -count=10 ./mpmc/":                                          {run: "go test -run '^$' -bench All -benchtime 1x ./mpmc/"},
	// docs/design.md and docs/benchmarks.md: PushWait and groups of shards (issue 36)
	"go test -run '^$' -bench PushWait -benchtime 1x -count 5 ./sink/":                                            {run: "go test -run '^$' -bench PushWait -benchtime 1x ./sink/"},
	"go test -run '^$' -bench 'Contended/.*/.*/impl=(Handle|Sink)\\.Push$' -benchtime 2000000x -count 10 ./sink/": {run: "go test -run '^$' -bench 'Contended/.*/.*/impl=(Handle|Sink)\\.Push$/producers=1$' -benchtime 1000x ./sink/"},
	"go test -run '^$' -bench Groups -benchtime 2000000x -count 10 ./sink/":                                       {run: "go test -run '^$' -bench Groups -benchtime 1000x ./sink/"},
}

func TestEveryDocumentedCommandIsClassified(t *testing.T) {
	found, err := doccheck.Commands(root, documents...)
	require.NoError(t, err)
	require.NotEmpty(t, found)
	seen := map[string]bool{}
	for _, c := range found {
		seen[c.Text] = true
		if _, ok := commands[c.Text]; !ok {
			t.Errorf("%s:%d documents %q, which this test does not know: add it to commands, with how to run it", c.File, c.Line, c.Text)
		}
	}
	for text := range commands {
		if !seen[text] {
			t.Errorf("commands lists %q, which no document has any more: remove it", text)
		}
	}
}

// TestEveryDocumentedCommandRuns runs each command of the documents as
// written or in its quick form, from the repository root through its
// go.work, as a reader would type it there.
func TestEveryDocumentedCommandRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs every documented command: about a minute")
	}
	found, err := doccheck.Commands(root, documents...)
	require.NoError(t, err)
	abs, err := filepath.Abs(root)
	require.NoError(t, err)
	var texts []string
	for _, c := range found {
		if !slices.Contains(texts, c.Text) {
			texts = append(texts, c.Text)
		}
	}
	for _, text := range texts {
		h := commands[text]
		if h.skip != "" {
			continue
		}
		line := h.run
		if line == "=" {
			line = text
		}
		t.Run(text, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-c", "set -o pipefail; "+line)
			cmd.Dir = abs
			cmd.Env = append(os.Environ(), "GOWORK="+filepath.Join(abs, "go.work"), "GOFLAGS=-buildvcs=false")
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s\n%s", line, tail(string(out), 40))
		})
	}
}

// TestTheInstallFromAClone follows the README's install before the
// release: a module of its own that replaces the module path with the
// clone, then go mod tidy, and a program on sink, mpmc and slogsink.
func TestTheInstallFromAClone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module of its own")
	}
	abs, err := filepath.Abs(root)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(`package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/shardedsink/shardedsink/mpmc"
	"github.com/shardedsink/shardedsink/sink"
	"github.com/shardedsink/shardedsink/slogsink"
)

func main() {
	s := sink.MustNew(sink.Config[int]{}, sink.ActionFunc[int](func(context.Context, []int) {}))
	tx, rx := mpmc.Bounded[int](1)
	_ = tx.TrySend(1)
	v, _ := rx.TryRecv()
	h, err := slogsink.New(os.Stdout, nil)
	if err != nil {
		panic(err)
	}
	slog.New(h).Info("installed")
	_ = h.Close(context.Background())
	fmt.Println(s.Push(v), s.Shutdown(context.Background()))
}
`), 0o644))
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %s\n%s", strings.Join(args, " "), out)
		return string(out)
	}
	run("mod", "init", "example.com/user")
	run("mod", "edit", "-replace", "github.com/shardedsink/shardedsink="+abs) // the README's line, with the clone's path
	run("mod", "tidy")
	out := run("run", ".")
	require.Contains(t, out, `"msg":"installed"`)
	require.Contains(t, out, "true <nil>")
}

func tail(s string, lines int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}
