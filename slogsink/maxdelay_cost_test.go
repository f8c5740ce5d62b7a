package slogsink_test

import (
	"testing"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/slogsink"
)

// BenchmarkInfoOnAChainWritingAtOnce is BenchmarkInfoOnAChain's slogsink
// with MaxDelay -1: a worker that writes each batch at once and so follows
// the loggers record by record. Against BenchmarkInfoOnAChain/handler=slogsink
// (the default MaxDelay) it is what the default saves the caller; the third
// table of docs/benchmarks.md ("Logging") shows both. (Not in a
// *bench_test.go file: compare.sh copies those into revisions that have no
// MaxDelay.)
func BenchmarkInfoOnAChainWritingAtOnce(b *testing.B) {
	b.Run("handler=slogsink", func(b *testing.B) {
		infoOnAChain(b, "slogsink", &slogsink.Options{Buffering: logsink.Buffering{MaxDelay: -1}})
	})
}
