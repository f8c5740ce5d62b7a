// Package natsprom exports the counters of a [natssink.Sink] to
// Prometheus: [NewCollector] returns a prometheus.Collector that reads the
// sink's Stats at each scrape, as promsink's collectors do (the package
// doc of [github.com/shardedsink/shardedsink/promsink] has the model).
//
//	s, _ := natssink.New(js, natssink.Config[Order]{..., Sink: sink.Config[Order]{Name: "orders"}})
//	prometheus.MustRegister(natsprom.NewCollector(s))
//
// It exports promsink's series of a sink's rings (shardedsink_queued_values,
// shardedsink_dropped_total, ...) for the sink's rings, and these, from
// natssink.Stats, each labelled sink=Config.Name:
//
//	shardedsink_nats_pushed_values_total  counter  calls of Push
//	shardedsink_nats_queued_values        gauge    values accepted and not yet published: in the rings, on disk,
//	                                               or with a worker that waits for room (MaxInFlight)
//	shardedsink_nats_in_flight_values     gauge    values published and awaiting their ack or a retry (<= MaxInFlight)
//	shardedsink_nats_in_flight_bytes      gauge    their payloads' bytes (about MaxInFlightBytes at most)
//	shardedsink_nats_acked_values_total   counter  values the stream acknowledged (each stored once)
//	shardedsink_nats_duplicate_acks_total counter  acks saying the stream already held the value (a retry after a
//	                                               lost ack); each such value is in acked once
//	shardedsink_nats_batched_values_total counter  of those acked, the ones acked by a fast batch (FastBatches)
//	shardedsink_nats_failed_values_total  counter  values given up: out of attempts or budget, a permanent or an
//	                                               Encode error, or given up by Shutdown
//	shardedsink_nats_retries_total        counter  publishes after a value's first
//
// Once the sink is quiet, pushed = dropped + queued + in flight + acked +
// failed, where dropped is the sum of shardedsink_dropped_total over its
// reasons; after a Shutdown that returned nil, pushed = dropped + acked +
// failed.
package natsprom

import "github.com/shardedsink/shardedsink/natssink"

// The doc link above names natssink's Sink.
var _ *natssink.Sink[int]
