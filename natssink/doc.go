// Package natssink publishes the values pushed into a sharded sink
// ([github.com/shardedsink/shardedsink/sink]) to NATS JetStream, one message
// per value: producers never wait on the stream, and every value is acked
// by the stream, counted as failed, or counted as dropped.
//
//	s, err := natssink.New(js, natssink.Config[Event]{
//		Subject: "events.app", // a stream must capture it
//		Encode:  func(dst []byte, e Event) ([]byte, error) { return e.AppendJSON(dst), nil },
//	})
//	ok := s.Push(ev)      // never waits on the stream; false: shed and counted
//	err = s.Shutdown(ctx) // publishes what the rings hold, waits for the acks
//
// Push or PushWait: [Sink.Push] for values that may be shed (telemetry,
// logs). A push never waits on the destination, however slow: a full ring
// sheds, and a push parks only while its drain worker is short of CPU
// behind a destination that keeps up (or, with Spill, while the spiller
// moves values to disk), for at most HandOffWait in all (sink's "What a
// push waits for"; here Config.Sink's). A burst larger than the rings is
// dropped and counted. [Sink.PushWait] for values worth a bounded wait (an audit event,
// a burst that must reach the stream whole): with no room it parks until
// the drain workers free some or its ctx ends, then drops and counts the
// value (Stats().WaitedOut). A ctx of a second holds a burst of 64
// producers x 500 values whole with the default Config
// (TestABurstPushedWithPushWaitIsAckedWhole).
//
// js comes from [Connect]("nats://a:4222,nats://b:4222,nats://c:4222") for a
// cluster, or from the package embedded, which starts a server in the
// process for development and tests: moving to a cluster changes only the
// URL.
//
// # Guarantees
//
//  1. [Sink.Push] is sink.Sink.Push: one lock-free push into a ring, no
//     allocation, no shared counter; false when the ring is full (shed and
//     counted) or Shutdown has begun.
//  2. The sink's drain workers publish each value as one message with a
//     Nats-Msg-Id header of its own (in a fast batch where asked for and
//     allowed: see Fast batches): the sink's random prefix (a NUID,
//     the last token of its ack inbox) and a sequence number. Every retry of a value carries its id,
//     so the stream stores it once if the retry falls within the stream's
//     duplicate window (keep RetryBudget below it).
//  3. Publishes are asynchronous: a worker does not wait for acks, except
//     when MaxInFlight values (or MaxInFlightBytes of payload) are
//     unacknowledged; then it waits for one, the rings fill and pushes are
//     shed. The client holds at most MaxInFlight values, each in a buffer
//     of its own slot.
//  4. A value is published again when its ack does not come within
//     AckTimeout, when no stream answers, when the client cannot take the
//     publish, or when the stream refuses it for a reason that can pass (a
//     timeout, 408; too many requests, 429; an unavailability, 5xx; a
//     duplicate still in process), after a doubling backoff, until
//     RetryBudget has passed since its first publish (and Attempts, if
//     set, are spent). It is then counted as failed, and so is a value
//     refused for any other reason (a bad subject, a payload over a limit,
//     a closed connection, an Encode error, panic or runtime.Goexit), with
//     its reason: Stats().LastError, and OnError at most once a second,
//     never with the payload. While the stream does not answer (an attempt
//     failed or timed out, and no ack has come since), one value probes it
//     on its own backoff and the others wait unpublished, new ones
//     included; the probe's ack sends them. So an outage costs each value
//     about one publish: through the crash probe (testdata/crash.txt)
//     1.04 publishes per value, where resending every due value at each
//     backoff step made 5.7.
//  5. Acked means the stream stored the value (a clustered stream acks
//     once a quorum has it). Failed means it is not known to be stored: a
//     value whose every ack was lost may be in the stream and in Failed.
//  6. Every value pushed is in exactly one of Dropped, Queued, InFlight,
//     Acked and Failed ([Stats]); after a Shutdown that returned nil,
//     Acked + Failed + Dropped == Pushed.
//  7. [Sink.Flush] returns once every value accepted before it is acked or
//     failed. [Sink.Shutdown] closes the rings, publishes what they hold,
//     and waits for every value in flight; when its ctx ends first it gives
//     up on those (failed, [ErrShutdown]) and publishes nothing more.
//
// Values keep no order across shards, and a retry overtakes later values.
//
// # Fast batches
//
// With Config.FastBatches = [FastBatchesAuto], on a stream with
// allow_batched (jetstream.StreamConfig.AllowBatchPublish, nats-server
// 2.14+), each batch a drain worker takes goes out as one JetStream
// fast-ingest batch (orbit.go's jetstreamext.FastPublisher): the server
// acks every so many messages instead of each one; each message still
// carries its value's Nats-Msg-Id. Against the pinned server (v2.15.2):
// a flow ack at batch sequence n means the stream holds messages 1..n
// (TestAFastBatchFlowAckMeansTheValuesUpToItAreStored); the stream
// recognises an id sent again in a later batch and stores it once
// (TestAFastBatchStoresAValueSentAgainInALaterBatchOnce); a SIGKILL of
// the leader ends the batch in flight with an error (the wait for the
// next flow ack times out), and of the values after the last flow ack
// some are stored and some not (300 of 499 in one run:
// TestAFastBatchThroughALeaderKillLosesNothingOnceResentByID); a value
// the stream refuses (no stream or another one captures its subject, a
// full stream with DiscardNew, a size over MaxMsgSize) ends the batch
// before it: the stream drops the values after it and commits, with no
// error, a count (BatchAck.BatchSize) of those before it, and only those
// are acked (TestAValueRefusedInAFastBatchIsNeverCountedAcked, on one
// server and on three).
// So a batch that ends without acking every value hands the rest to the
// retry path, one message each with its id, where each value's own
// answer decides (the refused one fails with the server's reason, or is
// retried as above), and the promises above hold (the cluster test runs
// with fast batches too). Values a batch acks are
// in Stats().Batched, not in Duplicates: the server does not say which it
// already had. A worker waits for its batch's first ack and its commit,
// at most AckTimeout each, before its next batch; values held through an
// outage go out one message each.
//
// They are off by default because here they do not pay: on the embedded
// server (testdata/bench.txt) a batch of the default 256 values carries
// fewer values per second than one message per value, for more CPU per
// value; batches of 1,024 close most of the gap. The stream's one
// goroutine that stores and deduplicates messages takes about half of
// the process's CPU either way. Measure on your network before turning
// them on.
//
// # Config
//
// [Config] moved fields before v1.0.0; an earlier program gets "unknown
// field" for these: Name, Shards, RingCapacity, BatchSize, MaxDelay,
// SizeOf, MaxQueuedBytes, Overflow, OverloadInterval, OnOverload and
// Logger are now in Config.Sink ([sink.Config]), with the same names.
// Such notes stay here until v1.0.0.
//
// # Outages
//
// The defaults are sized for a JetStream server that dies (a leader
// election takes 4-9 s, a reconnect 250 ms and up): a value is retried
// for RetryBudget (30 s) and fails no later than RetryBudget + AckTimeout
// (35 s) after its first publish; MaxInFlight (262,144) values, within
// MaxInFlightBytes (64 MiB) of payload, wait in their slots meanwhile,
// about 13 s at 20,000 values/s, before the rings fill and shed (unless
// Config.Sink.Spill puts a disk behind them: see Spilling to disk). New
// checks that the stream recognises duplicates for at least those 35 s,
// so that a retry of a value whose ack was lost is stored once.
// testdata/crash.txt holds what internal/crashprobe measured (three
// nats-server processes, the stream leader that the sink is connected to
// killed with SIGKILL and restarted 3 s later, 16 producers at 20,000
// values/s for 8 s, the default Config; testdata/crash.sh reruns it):
// the counts, and the peak of the heap, most of it the slots in flight
// (about 1 KiB each with 195-byte values: size MaxInFlight to what an
// outage must hold). The slots are given back once the backlog clears:
// `go run ./internal/crashprobe -settle 30s` measured a heap of 3 MiB
// before the outage, a peak of 148 MiB, and 3 MiB 30 s after (2-core AMD
// EPYC, load 0.27).
//
// While the connection is down, nats.go buffers publishes (8 MiB by
// default, nats.ReconnectBufSize) and sends them once it reconnects; a
// value that failed meanwhile (out of budget, or given up by Shutdown) may
// still be in that buffer and be stored: Failed is "not known to be
// stored", never "known not to be". The client's connection keeps
// reconnecting (see [Connect]), and a Shutdown during an outage takes as
// long as the values it holds need: give it a ctx with a deadline.
//
// # Spilling to disk
//
// For an outage longer than MaxInFlight and the rings hold, set
// Config.Sink.Spill ([sink.Spill]: a directory, a disk budget, a
// [sink.Codec] for T): while the workers wait for room in flight, the
// sink's spiller moves the rings' values to disk, and they are
// published, in each shard's order, once the stream answers again
// (Stats().Rings.Spilled, SpillDrained). Values on disk are in Queued, and
// take no slot and no RetryBudget until they are read back: an outage of
// 20,000 values against a MaxInFlight of 64 and rings of 2 x 256 drops
// and fails none, and the stream stores each once
// (TestAnOutageLongerThanTheRingsHoldIsSpilledAndStoredOnce); so does a
// 20 s stop of the one server while 20,000 values/s are pushed, with the
// default Config but Spill and MsgIDOf: 262,144 values wait in their
// slots, about 136,000 on disk, the Go heap peaks at 352 MiB, and all
// 400,000 are acked 5-9 s after the server is back, on 2 shared cores
// (TestATwentySecondOutageAt20000ValuesPerSecondLosesNothing:
// `go test -run TwentySecond -v ./natssink`).
//
// New refuses Spill without Config.MsgIDOf. A process that dies (a
// SIGKILL, the machine) leaves the directory to the next sink on it,
// which publishes what was on disk first (Stats().Recovered), and some of
// those values may have been published already: those read back and
// handed to the workers since the tier's last sync (Spill.SyncInterval,
// a second by default). The sink's own ids (a NUID drawn by each sink,
// and a sequence number) do not survive the restart; the caller's do,
// so the stream recognises such a value and stores it once (its ack
// counts in Duplicates), if the restart comes within the stream's
// duplicate window (2 minutes by default). A producer process killed
// while it published 20,000 spilled values from disk, and a sink started
// on its directory: at least as many values stored as were spilled and
// synced, none twice, about 1,000 acked as duplicates; with the sink's
// own ids, about 2,200 stored twice (TestASpillDirectoryOutlivesASIGKILLAndIsStoredOnce).
// The Codec must give back a value with the same MsgIDOf. What a crash
// loses: the values in the rings, what was spilled since the last sync,
// and the values in flight, those read back from disk included (the
// tier counts a value done once Drain returns, which is when it is
// published, not acked: up to MaxInFlight values that a sync marked
// done before their acks came). A Shutdown whose ctx ended
// gives up on the values in flight (Failed) and leaves what the rings
// held on disk, with what was there, for the next sink: in Queued, not
// in Failed (TestAShutdownWhoseCtxEndsLeavesTheDiskToTheNextSink). The
// tier costs a value nothing until it spills; then an Append and a
// Decode of the Codec, besides Encode at its publish.
//
// # Costs
//
// A push costs what sink.Sink.Push costs. Per value the drain path makes
// no allocation with nats.go v1.56.0 (two before, in PublishMsg's header
// buffer; TestTheDrainPathAllocatesAtMostTwicePerValue); the client's
// reading of each ack allocates nats.go's message. BenchmarkProducers
// compares the sink, with and without fast batches, with producers
// calling js.Publish and js.PublishAsync (64 producers, 195-byte values,
// an embedded server; the figures in docs/benchmarks.md, on 2 cores and
// once on 16). The server's stream sets the ceiling for every publisher;
// what the sink gains over producers that call js.PublishAsync grows with
// the cores, since those producers share one connection:
//
//	go test -run '^$' -bench Producers -benchtime 200000x ./natssink
package natssink
