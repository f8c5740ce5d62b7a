package promsink

import "github.com/shardedsink/shardedsink/promsink/internal/series"

// Option changes what a collector exports.
type Option func(*series.Options)

// WithPerShard exports the ring series of a sink (see the package doc)
// once per shard, with a shard label ("0", "1", ...), in place of their
// totals: sum by (sink) gives the totals back. It multiplies those series
// by the shard count, so it is off by default.
func WithPerShard() Option { return func(o *series.Options) { o.PerShard = true } }
