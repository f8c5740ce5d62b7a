package promsink_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"

	"github.com/shardedsink/shardedsink/promsink"
	"github.com/shardedsink/shardedsink/sink"
	"github.com/shardedsink/shardedsink/slogsink"
)

// A sink's collector, registered as any other; in a service,
// http.Handle("/metrics", promhttp.Handler()) serves it.
func ExampleNewSinkCollector() {
	s := sink.MustNew(sink.Config[string]{Name: "events", Shards: 2},
		sink.ActionFunc[string](func(context.Context, []string) {}))
	reg := prometheus.NewRegistry()
	reg.MustRegister(promsink.NewSinkCollector(s))

	for _, ev := range []string{"a", "b", "c"} {
		s.Push(ev)
	}
	_ = s.Shutdown(context.Background())
	s.Push("late") // after Shutdown: dropped, reason="after_shutdown"

	text, _ := testutil.GatherAndFormat(reg, expfmt.TypeTextPlain,
		"shardedsink_drained_total", "shardedsink_dropped_total", "shardedsink_capacity_values")
	fmt.Print(string(text))
	// Output:
	// # HELP shardedsink_capacity_values Slots of the rings: the most values they hold.
	// # TYPE shardedsink_capacity_values gauge
	// shardedsink_capacity_values{sink="events"} 16384
	// # HELP shardedsink_drained_total Values taken from the rings and handed to Drain (a Drain call still running included).
	// # TYPE shardedsink_drained_total counter
	// shardedsink_drained_total{sink="events"} 3
	// # HELP shardedsink_dropped_total Values dropped, by reason: full (every ring tried was full in slots), bytes (MaxQueuedBytes spent), waited_out (a PushWait whose context ended before room came), after_shutdown (pushed once Shutdown had begun), displaced (pushed out of a full ring by DropOldest), disk (the spill tier was full or off, or lost the value).
	// # TYPE shardedsink_dropped_total counter
	// shardedsink_dropped_total{reason="after_shutdown",sink="events"} 1
	// shardedsink_dropped_total{reason="bytes",sink="events"} 0
	// shardedsink_dropped_total{reason="disk",sink="events"} 0
	// shardedsink_dropped_total{reason="displaced",sink="events"} 0
	// shardedsink_dropped_total{reason="full",sink="events"} 0
	// shardedsink_dropped_total{reason="waited_out",sink="events"} 0
}

// A slogsink handler's collector: the handler has no name, so the
// collector is given the sink label.
func ExampleNewHandlerCollector() {
	var out bytes.Buffer
	h, err := slogsink.New(&out, nil)
	if err != nil {
		panic(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(promsink.NewHandlerCollector(h, "app"))

	log := slog.New(h)
	log.Info("started")
	log.Warn("disk almost full")
	_ = h.Close(context.Background())
	log.Error("after Close") // dropped, level="error"

	text, _ := testutil.GatherAndFormat(reg, expfmt.TypeTextPlain,
		"shardedsink_slog_written_records_total", "shardedsink_slog_dropped_records_total")
	os.Stdout.Write(text)
	// Output:
	// # HELP shardedsink_slog_dropped_records_total Records shed, by level: debug (below INFO), info (INFO), warn (WARN), error (ERROR and above); each found its ring full in slots or bytes (below KeepLevel), or came after Close.
	// # TYPE shardedsink_slog_dropped_records_total counter
	// shardedsink_slog_dropped_records_total{level="debug",sink="app"} 0
	// shardedsink_slog_dropped_records_total{level="error",sink="app"} 1
	// shardedsink_slog_dropped_records_total{level="info",sink="app"} 0
	// shardedsink_slog_dropped_records_total{level="warn",sink="app"} 0
	// # HELP shardedsink_slog_written_records_total Records in Writes that succeeded.
	// # TYPE shardedsink_slog_written_records_total counter
	// shardedsink_slog_written_records_total{sink="app"} 2
}

// Per-shard series, for finding the one shard that sheds.
func ExampleWithPerShard() {
	s := sink.MustNew(sink.Config[int]{Name: "events", Shards: 2},
		sink.ActionFunc[int](func(context.Context, []int) {}))
	defer s.Shutdown(context.Background())
	c := promsink.NewSinkCollector(s, promsink.WithPerShard())
	fmt.Println(testutil.CollectAndCount(c, "shardedsink_queued_values"), "queued series")
	// Output: 2 queued series
}
