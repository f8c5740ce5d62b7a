package otelmetric

import (
	"github.com/shardedsink/shardedsink/internal/statstable"
	"github.com/shardedsink/shardedsink/otelmetric/internal/instruments"
)

// ScopeName is the instrumentation scope (meter name) of the instruments.
const ScopeName = instruments.ScopeName

// Option changes what is observed.
type Option func(*statstable.Options)

// WithPerShard observes the ring instruments of a sink (see the package
// doc) once per shard, with the attribute shardedsink.shard, in place of
// their totals. It multiplies those observations by the shard count, so
// it is off by default.
func WithPerShard() Option { return func(o *statstable.Options) { o.PerShard = true } }
