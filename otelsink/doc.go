// Package otelsink is an OpenTelemetry span processor built on the sharded
// sink of [github.com/shardedsink/shardedsink/sink]: a drop-in replacement
// for sdktrace.NewBatchSpanProcessor whose OnEnd never waits and never
// contends on one shared channel.
package otelsink
