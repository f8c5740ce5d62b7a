// Package frontpage keeps the measured one-liners in step with the
// committed raw runs they come from (bench/contended's JSON and the
// integrations' testdata/bench.txt): the README's "Use this instead of"
// list, each line with both sides, and the integrations block of
// docs/benchmarks.md; and it checks the figures the README's prose gives
// outside those blocks (the sink at 4 and 256 producers, mpmc against a Go
// channel, which mpmc's package doc gives too, from the same
// bench/channels/RESULTS.md). It has no API; its tests render the two
// blocks and fail when they differ (go test ./bench/frontpage -update
// rewrites them).
package frontpage
