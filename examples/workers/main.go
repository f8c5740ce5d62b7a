// Command workers spreads jobs over worker goroutines with the mpmc
// channel, as the package's second example does: each worker waits for the
// next job on its own clone of one receiver, so a busy worker leaves new
// jobs to the others, and the results come back through a second channel.
// The channels close themselves: the jobs channel when the producer
// releases the last job sender, the results channel when the last worker
// releases its result sender.
//
//	go run ./examples/workers
//	go run ./examples/workers -workers 8 -jobs 10000 -queue 4
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/shardedsink/shardedsink/mpmc"
)

func main() {
	workers := flag.Int("workers", 4, "worker goroutines")
	jobs := flag.Int("jobs", 100, "jobs: job n sums 1..n")
	queue := flag.Int("queue", 16, "capacity of the jobs channel")
	flag.Parse()
	if *workers < 1 || *jobs < 1 || *queue < 1 {
		fmt.Fprintln(os.Stderr, "workers: -workers, -jobs and -queue must be at least 1")
		os.Exit(2)
	}
	if err := run(os.Stdout, *workers, *jobs, *queue); err != nil {
		fmt.Fprintln(os.Stderr, "workers:", err)
		os.Exit(1)
	}
}

// result is what a worker sends back for job n.
type result struct {
	worker int
	n, sum uint64
}

func run(out io.Writer, workers, jobCount, queue int) error {
	ctx := context.Background()
	jobs, jobReceiver := mpmc.Bounded[uint64](queue)
	resultSender, results := mpmc.Unbounded[result]()

	var wg sync.WaitGroup
	for w := range workers {
		jobs := jobReceiver.Clone()
		results := resultSender.Clone()
		wg.Go(func() {
			defer jobs.Release()
			defer results.Release() // the last one closes the results channel
			// The loop ends when the jobs channel is closed and empty.
			for n := range jobs.All(ctx) {
				var sum uint64
				for i := uint64(1); i <= n; i++ {
					sum += i
				}
				_ = results.Send(ctx, result{worker: w, n: n, sum: sum})
			}
		})
	}
	// From here on the workers hold the only job receivers and result
	// senders.
	jobReceiver.Release()
	resultSender.Release()

	go func() {
		defer jobs.Release() // no more jobs: the workers' loops end
		for n := 1; n <= jobCount; n++ {
			_ = jobs.Send(ctx, uint64(n))
		}
	}()

	// Results arrive in the order the workers finish their jobs; the loop
	// ends when every worker has released its result sender.
	var total uint64
	perWorker := make([]int, workers)
	count := 0
	for r := range results.All(ctx) {
		if r.sum != r.n*(r.n+1)/2 {
			return fmt.Errorf("job %d: worker %d summed %d", r.n, r.worker, r.sum)
		}
		total += r.sum
		perWorker[r.worker]++
		count++
	}
	wg.Wait()

	for w, n := range perWorker {
		fmt.Fprintf(out, "worker %d: %d jobs\n", w, n)
	}
	var want uint64
	for n := uint64(1); n <= uint64(jobCount); n++ {
		want += n * (n + 1) / 2
	}
	fmt.Fprintf(out, "total %d from %d results\n", total, count)
	if count != jobCount || total != want {
		return fmt.Errorf("got %d results totalling %d, want %d totalling %d", count, total, jobCount, want)
	}
	return nil
}
