package frontend_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/logsink/frontend"
)

// lineLogger is a whole front-end: a logger that formats "LEVEL msg" on
// the goroutine that logs and hands the bytes to its Stream.
type lineLogger struct{ s frontend.Stream }

func (l lineLogger) Log(level slog.Level, msg string) {
	call, ok := l.s.Begin(level)
	if !ok {
		return // shed and counted: nothing to format
	}
	defer l.s.End()
	r := frontend.GetRecord()
	fmt.Fprintf(r, "%s %s\n", level, msg)
	l.s.Push(call, level, r)
}

// report writes the drop reports in the logger's own format.
func report(d frontend.Drops) *frontend.Record {
	r := frontend.GetRecord()
	fmt.Fprintf(r, "WARN linelog: dropped %d records\n", d.Total)
	return r
}

func Example() {
	w, err := frontend.New(os.Stdout, &logsink.Options{Name: "linelog"}, report)
	if err != nil {
		panic(err)
	}
	root := lineLogger{w.Root()}
	root.Log(slog.LevelInfo, "served")
	root.Log(slog.LevelError, "failed")
	if err := w.Close(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println("written:", w.Stats().Written)
	// Output:
	// INFO served
	// ERROR failed
	// written: 2
}
