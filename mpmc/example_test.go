package mpmc_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/shardedsink/shardedsink/mpmc"
	"github.com/shardedsink/shardedsink/ring/mutex"
)

// Two senders and two receivers on a channel that holds two messages.
func Example() {
	ctx := context.Background()
	s1, r1 := mpmc.Bounded[string](2)
	s2 := s1.Clone()
	r2 := r1.Clone()

	// Two messages, from two different senders.
	_ = s1.Send(ctx, "hello")
	_ = s2.Send(ctx, "world")

	// The channel is full, so TrySend fails. A Send would wait for room.
	fmt.Println(s1.TrySend("again"))

	// Each message goes to one receiver, oldest first.
	fmt.Println(r1.Recv(ctx))
	fmt.Println(r2.Recv(ctx))
	_, err := r1.TryRecv()
	fmt.Println(err)

	// Releasing the last sender closes the channel. The receivers see that
	// once there is no message left in it.
	s1.Release()
	s2.Release()
	_, err = r1.Recv(ctx)
	fmt.Println(err)
	_, err = r2.Recv(ctx)
	fmt.Println(err)
	// Output:
	// mpmc: channel is full
	// hello <nil>
	// world <nil>
	// mpmc: channel is empty
	// mpmc: channel is closed
	// mpmc: channel is closed
}

// Spreading work over goroutines: each worker waits for the next job on
// its own clone of the same receiver, so a busy worker leaves new jobs to
// the others, and the results come back through a second channel.
func Example_workers() {
	ctx := context.Background()
	jobs, jobReceiver := mpmc.Bounded[uint64](16)
	resultSender, results := mpmc.Unbounded[uint64]()

	var wg sync.WaitGroup
	for range 4 {
		jobs := jobReceiver.Clone()
		results := resultSender.Clone()
		wg.Go(func() {
			defer jobs.Release()
			defer results.Release()
			// The loop ends when the channel is closed and empty.
			for n := range jobs.All(ctx) {
				var sum uint64
				for i := uint64(1); i <= n; i++ {
					sum += i
				}
				_ = results.Send(ctx, sum)
			}
		})
	}
	// The workers are the only receivers of jobs and senders of results
	// from here on. The loop over the results below ends only when every
	// result sender is released, including this one.
	jobReceiver.Release()
	resultSender.Release()

	for n := uint64(1); n <= 100; n++ {
		_ = jobs.Send(ctx, n)
	}
	// No more jobs. The workers' loops end after they take the last one.
	jobs.Release()

	// Results arrive in the order the workers finish their jobs. The loop
	// ends when every worker has released its sender.
	var total uint64
	for sum := range results.All(ctx) {
		total += sum
	}
	wg.Wait()
	fmt.Println(total)
	// Output: 171700
}

// ForceSend keeps the newest values: on a full channel it takes the
// oldest out to make room.
func ExampleSender_ForceSend() {
	s, r := mpmc.Bounded[int](2)
	for i := 1; i <= 4; i++ {
		old, displaced, _ := s.ForceSend(i)
		if displaced {
			fmt.Println("displaced", old)
		}
	}
	for range 2 {
		v, _ := r.TryRecv()
		fmt.Println("received", v)
	}
	// Output:
	// displaced 1
	// displaced 2
	// received 3
	// received 4
}

// RecvMany waits for one value, then takes what else is buffered.
func ExampleReceiver_RecvMany() {
	ctx := context.Background()
	s, r := mpmc.Unbounded[string]()
	for _, v := range []string{"a", "b", "c"} {
		_ = s.Send(ctx, v)
	}
	s.Release()

	batch := make([]string, 2)
	for {
		n, err := r.RecvMany(ctx, batch)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(batch[:n])
	}
	// Output:
	// [a b]
	// [c]
	// mpmc: channel is closed
}

// A Recv that gives up because its context ends has taken nothing.
func ExampleReceiver_Recv_timeout() {
	_, r := mpmc.Bounded[int](1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	_, err := r.Recv(ctx)
	fmt.Println(err)
	// Output: context deadline exceeded
}

// Closed can be waited on in a select, next to other channels.
func ExampleReceiver_Closed() {
	s, r := mpmc.Unbounded[int]()
	go s.Release() // the last sender goes: the channel closes
	select {
	case <-r.Closed():
		fmt.Println("closed")
	case <-time.After(time.Minute):
		fmt.Println("still open")
	}
	// Output: closed
}

// BoundedOn runs a channel over a ring of any backend, here ring/mutex's (one
// lock around a circular slice), to compare it with the lock-free ring that
// Bounded uses, or to reason about a simpler one. The channel owns the ring
// from then on, and its capacity is the ring's. It behaves as any other
// channel; a ring that cannot close itself, as this one, costs each send and
// receive two atomic read-modify-writes more (go test -run '^$' -bench
// 'TryPath|WaitPath' ./mpmc/ measures them: rows BoundedOn_plain_vyukov
// against BoundedOn_closable_vyukov).
func ExampleBoundedOn() {
	ctx := context.Background()
	tx, rx := mpmc.BoundedOn[string](mutex.New[string](2))
	fmt.Println("capacity:", tx.Cap())
	_ = tx.Send(ctx, "a")
	_ = tx.Send(ctx, "b")
	fmt.Println(tx.TrySend("c")) // full: a Send would wait for room

	tx.Release() // the last sender: the channel closes, its values stay
	for v := range rx.All(ctx) {
		fmt.Println(v)
	}
	fmt.Println("closed:", rx.IsClosed())
	rx.Release()
	// Output:
	// capacity: 2
	// mpmc: channel is full
	// a
	// b
	// closed: true
}
