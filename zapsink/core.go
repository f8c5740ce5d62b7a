package zapsink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"go.uber.org/zap/zapcore"

	"github.com/shardedsink/shardedsink/internal/fielderr"
	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/logsink/frontend"
)

// DroppedMessage is the message of the entry that reports, in the log
// stream, how many records were shed just before it: at zapcore.WarnLevel,
// with the fields "dropped" (a uint64) and "dropped_by_level", an object
// with the count of each level that lost records ("debug", "info", "warn",
// "error"; DPanic, Panic and Fatal count as "error").
const DroppedMessage = "zapsink: dropped records"

// shared is what a Core and every Core that With derives from it share.
type shared struct {
	w       *frontend.Writer
	root    zapcore.Encoder // the encoder New got, which encodes the drop reports
	timeout time.Duration
}

// Core is a zapcore.Core that encodes each entry on the goroutine that
// logs and never waits for the destination. See the package doc.
type Core struct {
	zapcore.LevelEnabler
	enc zapcore.Encoder
	s   frontend.Stream
	sh  *shared
}

var _ zapcore.Core = (*Core)(nil)

// NewCore returns a Core that encodes with enc, writes to dst and logs the
// levels that enab enables, as zapcore.NewCore(enc, zapcore.AddSync(dst),
// enab) does, through a logsink.Writer. It returns an error wrapping
// [ErrInvalidOptions] that names every bad argument (a nil encoder, level
// enabler or destination, a bad size); nothing is started then. Otherwise
// the writer's workers run until [Core.Close].
func NewCore(enc zapcore.Encoder, dst io.Writer, enab zapcore.LevelEnabler, opts *Options) (*Core, error) {
	errs := fielderr.New(ErrInvalidOptions)
	if enc == nil {
		errs.Add("enc", "nil", "NewCore needs an encoder")
	}
	if enab == nil {
		errs.Add("enab", "nil", "NewCore needs a level enabler")
	}
	lo, timeout, err := opts.settle(dst)
	errs.Wrap(err)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	sh := &shared{root: enc, timeout: timeout}
	if sh.w, err = frontend.New(dst, &lo, sh.report); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	return &Core{LevelEnabler: enab, enc: enc.Clone(), s: sh.w.Root(), sh: sh}, nil
}

// Level returns the lowest level the Core logs, for zap.Logger.Level.
func (c *Core) Level() zapcore.Level { return zapcore.LevelOf(c.LevelEnabler) }

// With returns a Core that adds fields to every entry, in a shard of its
// own (the next one, round-robin): it clones the encoder and adds the
// fields to it now, once, as zapcore's core does.
func (c *Core) With(fields []zapcore.Field) zapcore.Core {
	enc := c.enc.Clone()
	for i := range fields {
		fields[i].AddTo(enc)
	}
	return &Core{LevelEnabler: c.LevelEnabler, enc: enc, s: c.sh.w.Stream(), sh: c.sh}
}

// Check adds the Core to ce when it logs ent's level.
func (c *Core) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(ent.Level) {
		return ce.AddCore(ent, c)
	}
	return ce
}

// Write encodes ent and fields on the calling goroutine and hands the
// bytes to the writer; it never waits for the destination. A record that
// the writer sheds costs no encoding. After an entry above ErrorLevel it
// calls Sync (see the package doc). It returns the encoder's error, or an
// error for an encoder that panicked (the record is counted in
// Stats.Errors either way), and nil otherwise, whether the record was
// queued or shed and counted.
func (c *Core) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	err := c.write(ent, fields)
	if ent.Level > zapcore.ErrorLevel {
		_ = c.Sync() // we may be crashing: as zapcore's core does
	}
	return err
}

func (c *Core) write(ent zapcore.Entry, fields []zapcore.Field) (err error) {
	lv := SlogLevel(ent.Level)
	call, ok := c.s.Begin(lv)
	if !ok {
		return nil
	}
	defer c.s.End()
	r, err := c.sh.encode(c.enc, ent, fields, true)
	if r != nil {
		c.s.Push(call, lv, r)
	}
	return err
}

// encode encodes ent and fields with enc into a pooled Record, or returns
// the encoder's error (an error for a panic) with the failure counted:
// in Errors for a record (record true), a panic in Panics.
func (sh *shared) encode(enc zapcore.Encoder, ent zapcore.Entry, fields []zapcore.Field, record bool) (r *frontend.Record, err error) {
	returned := false
	defer func() {
		if !returned {
			p := recover()
			if record {
				sh.w.Fail(1, nil)
			}
			sh.w.Panicked("the encoder", p)
			r, err = nil, fmt.Errorf("zapsink: the encoder panicked: %v", p)
		}
	}()
	buf, err := enc.EncodeEntry(ent, fields)
	returned = true
	if err != nil {
		if record {
			sh.w.Fail(1, err)
		} else {
			sh.w.Fail(0, err)
		}
		return nil, err
	}
	r = frontend.GetRecord()
	_, _ = r.Write(buf.Bytes())
	buf.Free()
	return r, nil
}

// report is the writer's drop report (frontend.Report), encoded by the
// encoder New got.
func (sh *shared) report(d frontend.Drops) *frontend.Record {
	ent := zapcore.Entry{Level: zapcore.WarnLevel, Time: time.Now(), Message: DroppedMessage}
	fields := []zapcore.Field{
		{Key: "dropped", Type: zapcore.Uint64Type, Integer: int64(d.Total)},
		{Key: "dropped_by_level", Type: zapcore.ObjectMarshalerType, Interface: byLevel(d.ByLevel)},
	}
	if d.WaitedOut != 0 {
		fields = append(fields,
			zapcore.Field{Key: "waited_out", Type: zapcore.Uint64Type, Integer: int64(d.WaitedOut)},
			zapcore.Field{Key: "waited_out_by_level", Type: zapcore.ObjectMarshalerType, Interface: byLevel(d.WaitedOutByLevel)})
	}
	r, _ := sh.encode(sh.root, ent, fields, false)
	return r
}

// byLevel marshals the counts of a drop report under zap's level names.
type byLevel [len(dropLevels)]uint64

// dropLevels are zap's levels of frontend.DropLevels.
var dropLevels = [...]zapcore.Level{zapcore.DebugLevel, zapcore.InfoLevel, zapcore.WarnLevel, zapcore.ErrorLevel}

func (b byLevel) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	for i, n := range b {
		if n != 0 {
			enc.AddUint64(dropLevels[i].String(), n)
		}
	}
	return nil
}

// Sync writes everything logged before it to the destination, within
// Options.SyncTimeout: it returns nil, or an error wrapping
// context.DeadlineExceeded when the destination took longer. After Close
// it returns nil.
func (c *Core) Sync() error { return c.sh.sync() }

func (sh *shared) sync() error {
	ctx, cancel := context.WithTimeout(context.Background(), sh.timeout)
	defer cancel()
	err := sh.w.Flush(ctx)
	if errors.Is(err, logsink.ErrClosed) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("zapsink: Sync: %w", err)
	}
	return nil
}

// Close writes what is buffered and stops the writer's workers, for this
// Core and every Core derived from it; entries logged after are dropped
// and counted. It returns nil, or ctx.Err() when ctx ends first
// (logsink.Writer.Close). Close does not close the destination.
func (c *Core) Close(ctx context.Context) error { return c.sh.w.Close(ctx) }

// Done is closed once Close has stopped the workers; from then on Stats
// is final.
func (c *Core) Done() <-chan struct{} { return c.sh.w.Done() }

// Stats returns the writer's counters (logsink.Stats).
func (c *Core) Stats() logsink.Stats { return c.sh.w.Stats() }
