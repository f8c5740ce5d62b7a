package zapsink

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"go.uber.org/zap/zapcore"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/logsink/frontend"
)

// WriteSyncer is a zapcore.WriteSyncer on a logsink.Writer, for a core of
// your own (zapcore.NewCore(enc, ws, level)): each Write is one record.
// A WriteSyncer gets no level with the bytes, so it reads it from them,
// with Options.LevelOf (default [JSONLevel]: zap's JSON encoders with the
// level under "level"), so that KeepLevel keeps errors longest. Write
// never waits for the destination and returns len(p), nil; Sync writes
// what is buffered within Options.SyncTimeout, and zapcore's core calls it
// after every entry above ErrorLevel. The drop reports are
// frontend.JSONReport's.
type WriteSyncer struct {
	sh      *shared
	levelOf func([]byte) zapcore.Level
}

// JSONLevel is the default Options.LevelOf: the level that zap's JSON
// encoder wrote under the key "level" (in any of zapcore's level
// encoders' spellings: "info", "INFO"), looked for in the first 256 bytes;
// InfoLevel when there is none. It allocates nothing.
func JSONLevel(p []byte) zapcore.Level {
	const key = `"level":"`
	head := p[:min(len(p), 256)]
	k := bytes.Index(head, []byte(key))
	if k < 0 {
		return zapcore.InfoLevel
	}
	rest := head[k+len(key):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return zapcore.InfoLevel
	}
	var l zapcore.Level
	if l.UnmarshalText(rest[:end]) != nil {
		return zapcore.InfoLevel
	}
	return l
}

// NewWriteSyncer returns a WriteSyncer that writes to dst. It returns an
// error wrapping [ErrInvalidOptions] that names every bad option.
func NewWriteSyncer(dst io.Writer, opts *Options) (*WriteSyncer, error) {
	lo, timeout, err := opts.settle(dst)
	if err != nil {
		return nil, err
	}
	sh := &shared{timeout: timeout}
	if sh.w, err = frontend.New(dst, &lo, frontend.JSONReport); err != nil {
		if errors.Is(err, logsink.ErrInvalidOptions) {
			return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
		}
		return nil, err
	}
	ws := &WriteSyncer{sh: sh, levelOf: JSONLevel}
	if opts != nil && opts.LevelOf != nil {
		ws.levelOf = opts.LevelOf
	}
	return ws, nil
}

// Write writes p as one record of the level Options.LevelOf reads from it;
// see logsink.Writer.WriteLevel. It never waits for the destination.
func (ws *WriteSyncer) Write(p []byte) (int, error) {
	return ws.sh.w.WriteLevel(SlogLevel(ws.levelOf(p)), p)
}

// Sync writes everything written before it to the destination, within
// Options.SyncTimeout; see [Core.Sync].
func (ws *WriteSyncer) Sync() error { return ws.sh.sync() }

// Close writes what is buffered and stops the workers within ctx; see
// logsink.Writer.Close.
func (ws *WriteSyncer) Close(ctx context.Context) error { return ws.sh.w.Close(ctx) }

// Done is closed once Close has stopped the workers.
func (ws *WriteSyncer) Done() <-chan struct{} { return ws.sh.w.Done() }

// Stats returns the writer's counters (logsink.Stats).
func (ws *WriteSyncer) Stats() logsink.Stats { return ws.sh.w.Stats() }
