// Package spill is the disk tier's storage: a segment log in a directory
// of its own, which one goroutine appends records to and another reads
// back in order, with a byte budget, checksums, and recovery after a
// crash. It uses the standard library only, like the rest of the core.
// A sink with Config.Spill keeps one Log per shard (see the sink
// package's doc, "The spill tier"); a Log is usable on its own too.
//
// # Layout and guarantees
//
// A Log owns its directory: [Open] takes an exclusive lock on it (flock on
// Unix, so that a second process gets [ErrLocked]; within a process every
// platform), and creates the directory 0700 and its files 0600, since they
// hold the user's data. Records go into segment files, each named by its
// number and holding records framed as
//
//	length uint32 | CRC-32C of length and payload uint32 | payload
//
// after an 8-byte magic, written when the segment is created. Appends
// fill a buffer in memory that is written to the segment when it passes
// 64 KiB, when the reader catches up with it, and at Sync; a segment that
// reaches Options.SegmentBytes is closed and the next append starts a new
// one. [Log.Append] refuses a record that would take the files past
// Options.MaxBytes ([ErrFull]); segments whose
// records have all been read and marked done ([Log.Done]) are deleted,
// which gives their bytes back (the last one, while it takes appends, at
// [Log.Close]: a Log closed with every record done leaves no segment). [Log.MarkDone] and [Log.Reclaim] are
// Done's two halves, for a caller that must not hold a lock while the
// file system frees a file.
//
// [Log.Sync] writes the buffer, fsyncs the segments written since the last
// Sync (a segment closed for appends is fsynced by the next Sync, not when
// it closes) and records the read position (the first record not marked
// done) in the cursor file, written to a temporary file, fsynced and
// renamed. It holds the Log's lock only to write the buffer and take what
// it syncs, so that appends and reads go on while it waits for the disk. What a crash (SIGKILL, power
// loss after the kernel's own writes) can lose: the records appended since
// the last Sync. What a Log opened on the same directory afterwards hands
// out twice: the records read and marked done since the last Sync (the
// cursor on disk is older). Everything else that was synced is read back,
// in order, once ([Stats].Recovered counts it).
//
// One goroutine may append while another reads: the reader reads only
// whole records already written (each segment publishes how far that is
// after each write), and judges a segment's tail only once no append goes
// into it: a reader that catches up with the appender gets io.EOF (or
// writes the buffer out) until the record being appended is written, and
// never takes it for a torn one.
//
// A record whose frame is torn (a crash mid-write) or whose checksum does
// not match (a flipped byte) ends the valid part of its segment: the reader
// counts it ([Stats].Corrupt), skips the rest of that segment and goes on
// with the next. It never panics. A write that fails (ENOSPC, EIO, a
// directory that went away) returns a [*WriteError] that says how many
// buffered records it lost; the segment is closed where its last good
// record ends, and the next append starts a new one. A segment whose
// magic cannot be written is removed, and one shorter than its magic (a
// crash right after its creation) holds no record: neither is counted as
// corrupt. A read that fails three times in a row (EIO) gives up its
// segment: Next returns a [*ReadError] that says how many records it
// lost, and goes on with the next segment.
//
// # Costs
//
// An append copies the record and its 8-byte frame into the buffer and
// computes its CRC-32C (hardware-assisted on amd64 and arm64); the write
// system call is paid once per 64 KiB. A read checks the record in a 256
// KiB read window and returns it there, without a copy. For 200-byte
// records on a 2-core AMD EPYC VM (load 1.3): an append 213-252 ns
// (790-940 MB/s, no allocation), a read 70-82 ns (2.4-2.9 GB/s); `go test
// -bench . ./sink/spill/` measures both. dd on the same disk, 512 MiB:
// writes 1.5-3.5 GB/s into the page cache (`dd if=/dev/zero of=F bs=64k
// count=8192`), 1.6-1.7 GB/s with `conv=fdatasync`; reads back 10.9-11.8
// GB/s (`dd if=F of=/dev/null bs=256k`).
package spill
