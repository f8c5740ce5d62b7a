// Package zapsink puts zap on logsink's non-blocking record writer: a
// [Core] (a zapcore.Core) that encodes every entry on the goroutine that
// logs, with the zapcore.Encoder you give it, and hands the bytes to a
// logsink.Writer, which never waits on the destination; and a
// [WriteSyncer] for users who keep their own core.
//
//	core, err := zapsink.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), os.Stdout, zap.InfoLevel, nil)
//	if err != nil { ... }
//	defer core.Close(context.Background()) // writes what is buffered
//	logger := zap.New(core)
//
// # Guarantees
//
// Those of logsink (its package doc). A logging call is a push. A push
// never waits on the destination, however slow: a full ring sheds, and a
// push parks only while its drain worker is short of CPU behind a
// destination that keeps up (or, with Spill, while the spiller moves
// values to disk), for at most HandOffWait in all (sink's "What a push
// waits for"; here Options.SpillDir and Options.DisableHandOff). The one
// other wait is the one a caller asks for: an entry at or above KeepLevel
// whose ring is full waits up to Options.KeepWait, default 1 ms, for
// room, and is then shed and counted in Stats().WaitedOut. When the
// destination falls behind, records are shed,
// counted, and reported in the stream by a record at WARN, encoded by
// your encoder,
//
//	{"level":"warn","msg":"zapsink: dropped records","dropped":1234,"dropped_by_level":{"info":1234}}
//
// records at or above Options.KeepLevel (default zap.WarnLevel) are shed
// last, queued bytes are bounded, and Close honours its ctx. And:
//
//  1. Output: the bytes are zap's. The Core's encoder encodes each entry
//     exactly as zapcore.NewCore's would; With clones the encoder and adds
//     its fields once, when it is called, as zapcore does; with nothing
//     shed the destination receives what zapcore.NewCore(enc,
//     zapcore.AddSync(dst), level) writes, byte for byte.
//  2. Levels: zap's levels map onto slog's (Debug -4, Info 0, Warn 4,
//     Error 8, DPanic 9, Panic 10, Fatal 11), so KeepLevel and the drop
//     counts by level work; DPanic, Panic and Fatal count as ERROR.
//  3. Order: a Core (New's, and each one With returns) writes through one
//     shard of the writer (With takes the next, round-robin); the records
//     one goroutine logs through one Logger keep their order.
//  4. Sync writes everything logged before it to the destination within
//     Options.SyncTimeout (default 1 s) and returns the ctx error when the
//     destination takes longer. The Core calls it itself after every
//     entry above ErrorLevel (DPanic, Panic, Fatal), as zapcore's does, so
//     that a Fatal or Panic record reaches the destination before zap
//     exits or panics, within that bound. It does not fsync.
//  5. An encoder that fails or panics costs its record only: counted in
//     Stats.Errors (and Panics), the error returned to zap, which reports
//     it on its ErrorOutput.
//
// A [WriteSyncer] gets bytes without a level: it reads the level from
// them (Options.LevelOf, default [JSONLevel]) so that KeepLevel applies;
// zap calls its Sync after an entry above ErrorLevel too.
package zapsink
