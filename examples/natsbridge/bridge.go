package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Event is what the producers push: who made it, its sequence number
// within its producer, and when.
type Event struct {
	Producer int   `json:"p"`
	Seq      int   `json:"s"`
	At       int64 `json:"t"` // Unix nanoseconds
}

// ErrInvalidConfig is wrapped by every error NewBridge returns for a bad
// Config; each names the field and the value.
var ErrInvalidConfig = errors.New("natsbridge: invalid config")

// Config configures a [Bridge].
type Config struct {
	// Subject is the NATS subject each batch is published to. Required.
	Subject string
	// Ack publishes through JetStream and waits for the stream's ack of
	// each batch; the subject must belong to a stream. Without it a batch
	// is published with core NATS, fire-and-forget, and counts as published
	// once the client has taken it.
	Ack bool
	// Timeout bounds the publishing of one batch, ack included. Default 5 s.
	// The ctx of the sink's Drain call bounds it too.
	Timeout time.Duration
}

// Bridge is a sink.Action that publishes each batch of events to a NATS
// subject as one message, newline-delimited JSON, one event per line.
type Bridge struct {
	nc  *nats.Conn
	js  jetstream.JetStream
	cfg Config
	buf sync.Pool // *bytes.Buffer; Drain runs on several workers at once

	// Batches and events: published (taken by the client, or acked in Ack
	// mode), failed (an error or a timeout; the batch is lost).
	pubBatches, pubEvents   atomic.Uint64
	failBatches, failEvents atomic.Uint64
	lastErr                 atomic.Pointer[error]
}

// NewBridge returns a Bridge that publishes on nc. It returns an error
// wrapping [ErrInvalidConfig] that names every bad field.
func NewBridge(nc *nats.Conn, cfg Config) (*Bridge, error) {
	var errs []error
	if nc == nil {
		errs = append(errs, fmt.Errorf("%w: nc = nil: a bridge needs a connection", ErrInvalidConfig))
	}
	if cfg.Subject == "" {
		errs = append(errs, fmt.Errorf("%w: Subject = %q: required", ErrInvalidConfig, cfg.Subject))
	}
	if cfg.Timeout < 0 {
		errs = append(errs, fmt.Errorf("%w: Timeout = %v: must be positive, or zero for the default 5s", ErrInvalidConfig, cfg.Timeout))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	b := &Bridge{nc: nc, cfg: cfg}
	b.buf.New = func() any { return new(bytes.Buffer) }
	if cfg.Ack {
		js, err := jetstream.New(nc)
		if err != nil {
			return nil, err
		}
		b.js = js
	}
	return b, nil
}

// Drain publishes batch as one message. It honours ctx: a batch whose ctx
// has ended, or ends while it waits for its ack, is counted as failed.
func (b *Bridge) Drain(ctx context.Context, batch []Event) {
	buf := b.buf.Get().(*bytes.Buffer)
	defer b.buf.Put(buf)
	buf.Reset()
	enc := json.NewEncoder(buf)
	for i := range batch {
		_ = enc.Encode(&batch[i]) // an Event always encodes
	}
	ctx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
	defer cancel()
	err := ctx.Err()
	if err == nil {
		if b.cfg.Ack {
			_, err = b.js.Publish(ctx, b.cfg.Subject, buf.Bytes())
		} else {
			// Publish copies the payload into the client's buffer.
			err = b.nc.Publish(b.cfg.Subject, buf.Bytes())
		}
	}
	n := uint64(len(batch))
	if err != nil {
		b.failBatches.Add(1)
		b.failEvents.Add(n)
		b.lastErr.Store(&err)
		return
	}
	b.pubBatches.Add(1)
	b.pubEvents.Add(n)
}

// BridgeStats counts what a Bridge did with the batches it was given.
type BridgeStats struct {
	PublishedBatches uint64 `json:"published_batches"` // acked, in Ack mode
	PublishedEvents  uint64 `json:"published_events"`
	FailedBatches    uint64 `json:"failed_batches"`
	FailedEvents     uint64 `json:"failed_events"`
	Acked            bool   `json:"acked"` // whether Published means acknowledged by JetStream
	LastError        string `json:"last_error,omitempty"`
}

// Stats returns the counters.
func (b *Bridge) Stats() BridgeStats {
	st := BridgeStats{
		PublishedBatches: b.pubBatches.Load(),
		PublishedEvents:  b.pubEvents.Load(),
		FailedBatches:    b.failBatches.Load(),
		FailedEvents:     b.failEvents.Load(),
		Acked:            b.cfg.Ack,
	}
	if e := b.lastErr.Load(); e != nil {
		st.LastError = (*e).Error()
	}
	return st
}
