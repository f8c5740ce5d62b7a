// Package zerologsink puts zerolog on logsink's non-blocking record
// writer: a [Writer] is a zerolog.LevelWriter that replaces
// diode.NewWriter. zerolog formats each event on the goroutine that logs,
// as always; the Writer copies its bytes into a pooled record buffer,
// pushes its pointer into a ring and returns, and
// logsink's workers write them in batches. It never waits for the
// destination, and unlike the diode it loses nothing silently, runs no
// poller while idle, and writes its tail on Close within a bound.
//
//	w, err := zerologsink.New(os.Stdout, nil)
//	if err != nil { ... }
//	defer w.Close() // writes what is buffered, within Options.CloseTimeout
//	log := zerolog.New(w).With().Timestamp().Logger()
//
// # Guarantees
//
// Those of logsink (its package doc). A logging call is a push. A push
// never waits on the destination, however slow: a full ring sheds, and a
// push parks only while its drain worker is short of CPU behind a
// destination that keeps up (or, with Spill, while the spiller moves
// values to disk), for at most HandOffWait in all (sink's "What a push
// waits for"; here Options.SpillDir and Options.DisableHandOff). The one
// other wait is the one a caller asks for: an event at or above KeepLevel
// whose ring is full waits up to Options.KeepWait, default 1 ms, for
// room, and is then shed and counted in Stats().WaitedOut. When the
// destination falls behind, events are shed,
// counted, and reported in the stream by an event at warn level that
// zerolog itself formats, with zerolog's field names,
//
//	{"level":"warn","dropped":1234,"dropped_by_level":{"info":1234},"time":"...","message":"zerologsink: dropped records"}
//
// events at or above Options.KeepLevel (default warn) are shed last,
// queued bytes are bounded, and [Writer.CloseContext] honours its ctx.
// And:
//
//  1. Output: zerolog's bytes, each event whole, in the order they were
//     accepted per Writer (a Writer is one shard of its logsink.Writer;
//     [Writer.Stream] gives a logger another). With nothing shed the
//     destination receives what zerolog writes into it directly, byte for
//     byte.
//  2. Levels: WriteLevel maps zerolog's levels onto slog's (trace -8,
//     debug -4, info 0, warn 4, error 8, fatal and panic 12; no level and
//     a plain Write count as info), so KeepLevel and the drop counts by
//     level work.
//  3. Fatal and Panic: WriteLevel writes an event at fatal or panic level
//     to the destination before it returns (within Options.CloseTimeout),
//     so it is there before zerolog exits or panics; zerolog also calls
//     Close before it exits on Fatal, which writes the rest.
//  4. Write and WriteLevel return len(p), nil, so zerolog prints no "could
//     not write event" for an event that was shed: the stream reports it.
package zerologsink
