package slogsink_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/slogsink"
)

func Example() {
	h, err := slogsink.New(os.Stdout, &slogsink.Options{
		Buffering: logsink.Buffering{Shards: 1}, // one shard: one order for every record
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{} // for a stable output
			}
			return a
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	logger := slog.New(h)
	logger.Info("started", "port", 8080)
	logger.With("request", 1).WithGroup("http").Warn("slow", "ms", 1200)

	// Close writes what is buffered; records logged after it are counted as
	// dropped.
	if err := h.Close(context.Background()); err != nil {
		fmt.Println(err)
	}
	logger.Info("too late")
	fmt.Println("written", h.Written(), "dropped", h.Dropped())
	// Output:
	// {"level":"INFO","msg":"started","port":8080}
	// {"level":"WARN","msg":"slow","request":1,"http":{"ms":1200}}
	// written 2 dropped 1
}

func ExampleOptions_text() {
	h, err := slogsink.New(os.Stdout, &slogsink.Options{
		Format: slogsink.Text,
		Level:  slog.LevelDebug,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	slog.New(h).Debug("cache miss", "key", "user:7")
	_ = h.Close(context.Background())
	// Output:
	// level=DEBUG msg="cache miss" key=user:7
}
