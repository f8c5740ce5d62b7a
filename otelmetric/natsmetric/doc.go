// Package natsmetric registers OpenTelemetry observable instruments for
// the counters of a [natssink.Sink]: [Observe] registers one callback that
// reads the sink's Stats at each collection, as otelmetric's do (the
// package doc of [github.com/shardedsink/shardedsink/otelmetric] has the
// model and the naming).
//
//	s, _ := natssink.New(js, natssink.Config[Order]{..., Sink: sink.Config[Order]{Name: "orders"}})
//	reg, err := natsmetric.Observe(otel.GetMeterProvider(), s)
//
// It observes otelmetric's instruments of a sink's rings
// (shardedsink.queue.size, shardedsink.processed, ...) for the sink's
// rings, and these, from natssink.Stats, in the shape of the SDK's
// exporter self-metrics (otel.sdk.exporter.span.exported, .inflight), each
// with shardedsink.sink.name = Config.Name:
//
//	shardedsink.nats.pushed     counter       {value}    calls of Push
//	shardedsink.nats.queued     updowncounter {value}    values accepted and not yet published: in the rings, on
//	                                                     disk, or with a worker that waits for room (MaxInFlight)
//	shardedsink.nats.inflight   updowncounter {value}    values published and awaiting their ack or a retry
//	                                                     (<= MaxInFlight)
//	shardedsink.nats.inflight_bytes updowncounter By     their payloads' bytes (about MaxInFlightBytes at most)
//	shardedsink.nats.exported   counter       {value}    values the stream acknowledged (no error.type), or
//	                                                     error.type=failed: given up (out of attempts or budget,
//	                                                     a permanent or an Encode error, or by Shutdown)
//	shardedsink.nats.duplicates counter       {ack}      acks saying the stream already held the value (a retry
//	                                                     after a lost ack); each such value is exported once
//	shardedsink.nats.batched    counter       {value}    of those exported, the ones acked by a fast batch
//	                                                     (FastBatches)
//	shardedsink.nats.retries    counter       {publish}  publishes after a value's first
//
// Once the sink is quiet, pushed = dropped + queued + inflight + exported
// (both), where dropped is shardedsink.processed with an error.type; after
// a Shutdown that returned nil, pushed = dropped + exported.
package natsmetric

import "github.com/shardedsink/shardedsink/natssink"

// The doc link above names natssink's Sink.
var _ *natssink.Sink[int]
