package promsink

import "github.com/shardedsink/shardedsink/internal/statstable"

// Option changes what a collector exports.
type Option func(*statstable.Options)

// WithPerShard exports the ring series of a sink (see the package doc)
// once per shard, with a shard label ("0", "1", ...), in place of their
// totals: sum by (sink) gives the totals back. It multiplies those series
// by the shard count, so it is off by default.
//
// One registry holds one set of label names per metric family, so the
// collectors of several sinks registered together must agree: give
// WithPerShard to all of them or to none (the registry refuses a per-shard
// collector beside a totals one, naming the family). For one sink per
// shard and another in total, register them with two registries and serve
// both (promhttp.HandlerFor with prometheus.Gatherers{a, b}).
func WithPerShard() Option { return func(o *statstable.Options) { o.PerShard = true } }
