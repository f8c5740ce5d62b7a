package logsink_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/shardedsink/shardedsink/logsink"
)

// The standard log package, through a Writer: log calls never wait for
// stdout, and Close writes what is buffered.
func Example() {
	w, err := logsink.New(os.Stdout, nil)
	if err != nil {
		panic(err)
	}
	logger := log.New(w, "app: ", 0)
	logger.Printf("served %d requests", 3)
	logger.Print("shutting down")
	if err := w.Close(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println("written:", w.Written(), "dropped:", w.Dropped())
	// Output:
	// app: served 3 requests
	// app: shutting down
	// written: 2 dropped: 0
}
