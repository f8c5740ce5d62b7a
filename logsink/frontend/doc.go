// Package frontend holds the hooks for writing a logging front-end on
// package logsink: a logger's handler or core that formats each record on
// the goroutine that logs and hands its bytes to a logsink.Writer, as
// slogsink (log/slog), zapsink (zap) and zerologsink (zerolog) do. A user
// of those packages, or of a plain logsink.Writer, needs none of it.
//
// A front-end makes its [Writer] with [New], from the logsink.Options its
// own options map to (with Options.Name set to its name) and a [Report]
// that formats the drop reports as its logger formats records. Its first
// logger logs through [Writer.Root], and each derived logger (a With)
// through a [Writer.Stream] of its own. A logging call then goes (the
// package's example is a whole front-end):
//
//	call, ok := s.Begin(level)
//	if !ok {
//		return // shed and counted: nothing to format
//	}
//	defer s.End() // even when the formatting panics
//	r := frontend.GetRecord()
//	fmt.Fprintf(r, "%s %s\n", level, msg) // the logger's own formatting
//	s.Push(call, level, r)                // takes r over: the drain worker puts it back
//
// Begin refuses a record before it is formatted when it would be shed, so
// a shed record costs no formatting; a recovered panic in the formatting
// is counted with [Writer.Fail] and [Writer.Panicked], and a record the
// formatter wrote no bytes for with [Writer.CountEmpty]. A logger that
// formats into bytes of its own instead writes them with
// [Stream.WriteLevel], one record per call. Every promise of the records
// (what a call waits for, what is shed and when, the order per Stream,
// the counts) is logsink's: its package doc. Package logsinktest checks a
// front-end against them.
package frontend
