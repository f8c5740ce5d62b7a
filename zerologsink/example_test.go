package zerologsink_test

import (
	"fmt"
	"os"

	"github.com/rs/zerolog"

	"github.com/shardedsink/shardedsink/zerologsink"
)

// zerolog on a Writer, in place of diode.NewWriter: the calls never wait
// for stdout, nothing is lost silently, and Close writes what is buffered.
func Example() {
	w, err := zerologsink.New(os.Stdout, nil)
	if err != nil {
		panic(err)
	}
	log := zerolog.New(w).With().Str("svc", "cart").Logger()
	log.Info().Int("status", 200).Msg("served")
	if err := w.Close(); err != nil {
		panic(err)
	}
	st := w.Stats()
	fmt.Println("written:", st.Written, "dropped:", st.Dropped)
	// Output:
	// {"level":"info","svc":"cart","status":200,"message":"served"}
	// written: 1 dropped: 0
}
