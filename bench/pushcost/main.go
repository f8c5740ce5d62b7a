// Command pushcost measures what a push costs and prints the "Push costs"
// tables of docs/benchmarks.md from one run:
//
//   - the contended push (sink's BenchmarkContended): per-thread CPU ns per
//     accepted push for Handle.Push and Sink.Push, 1 to 256 producers on
//     locked OS threads, 8- and 32-byte values, the sink's default shard
//     count, workers held or draining, with the ratios the design promises
//     (Sink.Push / Handle.Push, and each row against its 1-producer cost);
//   - the push as a user's program compiles it (bench/usercost, a package
//     that imports only the library) against the same benchmarks compiled
//     with sync/atomic imported (bench/usercost/withatomic).
//
// Each cell is the median over -count runs, with the smallest and largest.
//
//	go run ./bench/pushcost                        # runs the benchmarks (about 5 minutes), prints markdown
//	go run ./bench/pushcost -o bench/pushcost/results.txt   # also keeps the raw benchfmt lines
//	go run ./bench/pushcost -from bench/pushcost/results.txt   # re-renders a saved run
//	go run ./bench/pushcost -design                 # adds the alternatives (sink/doc.go's table)
//	go run ./bench/pushcost -from bench/pushcost/results.txt -design   # prints only that table
//
// The raw file is benchfmt: benchstat reads it too.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/shardedsink/shardedsink/bench/internal/report"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "pushcost:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pushcost", flag.ContinueOnError)
	fs.SetOutput(stderr)
	count := fs.Int("count", 10, "runs of each benchmark; cells are medians over them")
	benchtime := fs.String("benchtime", "2000000x", "-benchtime of the contended benchmark")
	design := fs.Bool("design", false, "also run BenchmarkPushDesignAlternatives (or, with -from, print only its table)")
	out := fs.String("o", "", "write the raw benchfmt output to this file as well")
	from := fs.String("from", "", "render a saved raw file instead of running the benchmarks")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *count < 1 {
		return fmt.Errorf("-count must be at least 1, got %d", *count)
	}
	var raw []byte
	if *from != "" {
		b, err := os.ReadFile(*from)
		if err != nil {
			return err
		}
		raw = b
	} else {
		var buf bytes.Buffer
		fmt.Fprintf(&buf, "# machine: %s\n# load before: %s\n", report.ReadMachine(), report.FormatLoad(report.LoadAverage()))
		c := strconv.Itoa(*count)
		benches := [][]string{
			{"test", "-run", "^$", "-bench", "Contended", "-benchtime", *benchtime, "-count", c, "./sink/"},
			{"test", "-run", "^$", "-bench", ".", "-count", c, "./bench/usercost/", "./bench/usercost/withatomic/"},
		}
		if *design {
			benches = append(benches, []string{"test", "-run", "^$", "-bench", "PushDesign", "-benchtime", *benchtime, "-count", c, "./sink/"})
		}
		for _, a := range benches {
			fmt.Fprintf(stderr, "pushcost: go %s\n", strings.Join(a, " "))
			cmd := exec.Command("go", a...)
			cmd.Stdout = &buf
			cmd.Stderr = stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("go %s: %w", strings.Join(a, " "), err)
			}
		}
		fmt.Fprintf(&buf, "# load after: %s\n", report.FormatLoad(report.LoadAverage()))
		raw = buf.Bytes()
		if *out != "" {
			if err := report.WriteFile(*out, raw); err != nil {
				return err
			}
		}
	}
	samples, err := parse(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	if len(samples) == 0 {
		return errors.New("no benchmark results in the output")
	}
	if *from != "" && *design {
		return renderDesign(stdout, samples)
	}
	return render(stdout, raw, samples)
}
