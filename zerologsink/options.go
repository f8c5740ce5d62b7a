package zerologsink

import (
	"fmt"
	"io"
	"time"

	"github.com/shardedsink/shardedsink/internal/fielderr"
	"github.com/shardedsink/shardedsink/logsink"
)

// settle validates o and dst and returns logsink's options and the close
// timeout. The error names every bad field, and dst, in zerologsink's
// terms.
func (o *Options) settle(dst io.Writer) (logsink.Options, time.Duration, error) {
	if o == nil {
		o = &Options{}
	}
	lo := logsink.Options{KeepLevel: o.KeepLevel, Buffering: o.Buffering, OnError: o.OnError, Logger: o.Logger, Name: "zerologsink"}
	errs := fielderr.New(ErrInvalidOptions)
	timeout := o.CloseTimeout
	if timeout < 0 {
		errs.Add("CloseTimeout", timeout, fmt.Sprintf("must be positive, or zero for the default %v", DefaultCloseTimeout))
	} else if timeout == 0 {
		timeout = DefaultCloseTimeout
	}
	// The fields passed on to logsink keep their names there (w is dst):
	// what logsink refuses is named in zerologsink's terms.
	errs.Adopt(lo.Check(dst), map[string]string{"w": "dst"})
	return lo, timeout, errs.Err()
}
