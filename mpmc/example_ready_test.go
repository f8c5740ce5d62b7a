package mpmc_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shardedsink/shardedsink/mpmc"
)

// A worker that waits on two mpmc channels and a ticker in one select, as
// it would on Go channels: Ready says that a value may be taken, TryRecv
// takes it (or finds that another receiver was first: ErrEmpty, and the
// worker waits again), and a receive that leaves values signals again.
// Once a channel is closed and empty its TryRecv says ErrClosed, and the
// worker stops selecting on it (a nil channel never becomes ready).
func ExampleReceiver_Ready() {
	ctx := context.Background()
	jobSender, jobs := mpmc.Bounded[int](8)
	commandSender, commands := mpmc.Unbounded[string]()

	done := make(chan struct{})
	sum, got := 0, []string{}
	go func() {
		defer close(done)
		defer jobs.Release()
		defer commands.Release()
		ticker := time.NewTicker(10 * time.Millisecond)
		defer ticker.Stop()
		jobsReady, commandsReady := jobs.Ready(), commands.Ready()
		for jobsReady != nil || commandsReady != nil {
			select {
			case <-jobsReady:
				n, err := jobs.TryRecv()
				switch {
				case errors.Is(err, mpmc.ErrClosed):
					jobsReady = nil
				case err == nil:
					sum += n
				} // ErrEmpty: taken by another receiver; wait again
			case <-commandsReady:
				c, err := commands.TryRecv()
				switch {
				case errors.Is(err, mpmc.ErrClosed):
					commandsReady = nil
				case err == nil:
					got = append(got, c)
				}
			case <-ticker.C:
				// Periodic work, beside the two channels.
			}
		}
	}()

	for i := 1; i <= 100; i++ {
		_ = jobSender.Send(ctx, i) // waits while the worker is behind
	}
	_ = commandSender.Send(ctx, "rotate")
	_ = commandSender.Send(ctx, "flush")
	jobSender.Release() // the last senders: closing both channels
	commandSender.Release()
	<-done
	fmt.Println("sum of jobs:", sum)
	fmt.Println("commands:", got)
	// Output:
	// sum of jobs: 5050
	// commands: [rotate flush]
}
