// Command crashprobe runs natssink's crash scenario once and prints what
// the sink counted and what the stream holds: three nats-server processes
// on loopback, an R3 file-stored stream, a sink with the default Config
// connected to the node of the stream's leader, producers pushing at a
// fixed rate, and that node killed with SIGKILL and restarted.
//
//	cd natssink && go run ./internal/crashprobe                      # the crash probe
//	cd natssink && go run ./internal/crashprobe -rate 5000 -for 4s   # smaller
//
// It builds nats-server from the module natssink requires (about a minute
// the first time). Exit status 1 when a value failed, was dropped, or is
// stored twice or not at all.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"time"

	"github.com/shardedsink/shardedsink/natssink/internal/crash"
	"github.com/shardedsink/shardedsink/natssink/internal/natsproc"
)

func main() {
	producers := flag.Int("producers", 16, "goroutines pushing")
	rate := flag.Int("rate", 20000, "values per second, over all producers")
	dur := flag.Duration("for", 8*time.Second, "how long they push")
	kill := flag.Duration("kill", 2*time.Second, "when the stream leader's node is killed (SIGKILL)")
	restart := flag.Duration("restart", 5*time.Second, "when it is restarted")
	loseAcks := flag.Duration("lose-acks", 300*time.Millisecond, "how long before the kill the sink's connection to the leader loses what the server sends")
	settle := flag.Duration("settle", 0, "keep the sink running this long once every value is settled, then measure the heap")
	verbose := flag.Bool("v", false, "log the run's milestones")
	flag.Parse()
	log.SetFlags(0)

	// The load before the run: read before nats-server is built and the
	// three servers start, which would count in it.
	load, _ := os.ReadFile("/proc/loadavg")
	dir, err := os.MkdirTemp("", "crashprobe-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	bin, err := natsproc.Build(ctx, dir)
	if err != nil {
		log.Fatal(err)
	}
	o := crash.Options{
		Bin: bin, Dir: dir, Producers: *producers, Rate: *rate, For: *dur, Kill: *kill, Restart: *restart, LoseAcks: *loseAcks, Settle: *settle,
	}
	if *verbose {
		o.Logf = log.Printf
	}
	fmt.Printf("# %s GOMAXPROCS=%d producers=%d rate=%d/s for=%v kill=%v restart=%v lose_acks=%v load=%s",
		runtime.Version(), runtime.GOMAXPROCS(0), *producers, *rate, *dur, *kill, *restart, *loseAcks, load)
	res, err := crash.Run(ctx, o)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("leader=%s connected_at_kill=%s\n%v\n", res.Leader, res.Connected, res)
	st := res.Stats
	if res.Shutdown != nil || st.Failed != 0 || st.Dropped != 0 || res.StoredTwice != 0 || res.Foreign != 0 ||
		res.StreamMsgs != st.Acked || st.Acked != res.Pushed {
		os.Exit(1)
	}
}
