package zerologsink

import (
	"cmp"
	"fmt"
	"io"
	"time"

	"github.com/rs/zerolog"

	"github.com/shardedsink/shardedsink/internal/fielderr"
	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/sink"
)

// settle validates o and dst and returns logsink's options and the close
// timeout. The error names every bad field, and dst, in zerologsink's
// terms.
func (o *Options) settle(dst io.Writer) (logsink.Options, time.Duration, error) {
	if o == nil {
		o = &Options{}
	}
	lo := logsink.Options{
		Shards:         o.Shards,
		RingCapacity:   o.RingCapacity,
		BatchSize:      o.BatchSize,
		MaxDelay:       o.MaxDelay,
		MaxQueuedBytes: o.MaxQueuedBytes,
		SpillDir:       o.SpillDir,
		SpillBytes:     o.SpillBytes,
		DisableHandOff: o.DisableHandOff,
		OnError:        o.OnError,
		Logger:         o.Logger,
		KeepLevel:      o.KeepLevel,
		KeepWait:       o.KeepWait,
		Name:           "zerologsink",
		Report:         report,
	}
	if lo.KeepLevel == nil {
		lo.KeepLevel = SlogLevel(zerolog.WarnLevel)
	}
	errs := fielderr.New(ErrInvalidOptions)
	timeout := o.CloseTimeout
	if timeout < 0 {
		errs.Add("CloseTimeout", timeout, fmt.Sprintf("must be positive, or zero for the default %v", DefaultCloseTimeout))
	} else if timeout == 0 {
		timeout = DefaultCloseTimeout
	}
	if dst == nil {
		errs.Add("dst", "nil", "zerologsink needs a destination")
	}
	o.checkSizes(errs.Add)
	if errs.Err() == nil {
		// What logsink (and its sink) would still refuse, should its
		// checks ever outgrow the ones above: named in logsink's terms,
		// but never a later failure of logsink.New.
		errs.Wrap(lo.Check(dst))
	}
	return lo, timeout, errs.Err()
}

// checkSizes reports, through bad, every field that zerologsink passes on
// to logsink and its sink with a value that they refuse, in zerologsink's
// terms: the field the user set, and its value.
func (o *Options) checkSizes(bad func(field string, value any, why string)) {
	if o.Shards < 0 {
		bad("Shards", o.Shards, fmt.Sprintf("must be positive, or zero for the default %d", logsink.DefaultShards))
	} else if o.Shards > sink.MaxShards {
		bad("Shards", o.Shards, fmt.Sprintf("must be at most sink.MaxShards (%d)", sink.MaxShards))
	}
	if o.RingCapacity < 0 {
		bad("RingCapacity", o.RingCapacity, fmt.Sprintf("must be positive, or zero for the default %d", logsink.DefaultRingCapacity))
	} else if o.RingCapacity > sink.MaxRingCapacity {
		bad("RingCapacity", o.RingCapacity, fmt.Sprintf("must be at most sink.MaxRingCapacity (%d)", sink.MaxRingCapacity))
	}
	if o.BatchSize < 0 {
		bad("BatchSize", o.BatchSize, fmt.Sprintf("must be positive, or zero for the default %d", logsink.DefaultBatchSize))
	}
	shards := int64(cmp.Or(o.Shards, logsink.DefaultShards))
	if o.Shards < 0 || o.Shards > sink.MaxShards {
		shards = 1 // reported above
	}
	switch {
	case o.SpillBytes < 0:
		bad("SpillBytes", o.SpillBytes, "must be positive, or zero for the default 1 GiB")
	case o.SpillDir == "":
		if o.SpillBytes > 0 {
			bad("SpillBytes", o.SpillBytes, "is set but SpillDir is not: the spill tier needs a directory")
		}
	case cmp.Or(o.SpillBytes, logsink.DefaultSpillBytes) < shards*sink.MinSpillShardBytes:
		bad("SpillBytes", o.SpillBytes, fmt.Sprintf("must be at least sink.MinSpillShardBytes (%d) a shard: %d for %d shards",
			sink.MinSpillShardBytes, shards*sink.MinSpillShardBytes, shards))
	}
	// MaxDelay, MaxQueuedBytes and KeepWait take every value (a negative
	// one means none), and the rest are not sizes.
}
