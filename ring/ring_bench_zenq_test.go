//go:build zenq

package ring_test

import "github.com/shardedsink/shardedsink/ring/zenq"

// With -tags zenq (and -ldflags=-checklinkname=0, which zenq needs on Go 1.23
// and later), the benchmarks also run over the zenq adapter:
//
//	go test -tags zenq -ldflags=-checklinkname=0 -run '^$' -bench . ./ring/
func init() {
	backends = append(backends, backend{"zenq", zenq.Factory[int]})
}
