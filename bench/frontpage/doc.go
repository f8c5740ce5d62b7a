// Package frontpage keeps the measured one-liners in step with the
// committed raw runs they come from (bench/contended's JSON and the
// integrations' testdata/bench.txt): the README's "Use this instead of"
// list, each line with both sides, and the integrations block of
// docs/benchmarks.md. It has no API; its test renders the two blocks and
// fails when they differ (go test ./bench/frontpage -update rewrites them).
package frontpage
