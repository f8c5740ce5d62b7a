// Package frontpage keeps the README's measured one-liners (the
// integrations against what they replace, and "Compared with") in step
// with the committed raw runs they come from: bench/contended's JSON and
// the integrations' testdata/bench.txt. It has no API; its test renders the
// README's two blocks and fails when they differ (go test
// ./bench/frontpage -update rewrites them).
package frontpage
