// Package fielderr collects what a configuration check finds: one error
// per bad field, each naming the field and its value and wrapping the
// package's sentinel (sink.ErrInvalidConfig, logsink.ErrInvalidOptions,
// ...), returned all at once so that a user fixes every field in one go.
package fielderr

import (
	"errors"
	"fmt"
)

// List is the errors of one check. Make it with New.
type List struct {
	sentinel error
	errs     []error
}

// New returns an empty List whose errors wrap sentinel.
func New(sentinel error) *List { return &List{sentinel: sentinel} }

// Add records that field, which holds value, is bad, and why: "%w: field
// = value: why".
func (l *List) Add(field string, value any, why string) {
	l.errs = append(l.errs, fmt.Errorf("%w: %s = %v: %s", l.sentinel, field, value, why))
}

// Wrap records err, found by a check of its own (a part checked
// elsewhere), wrapped in the sentinel unless it wraps it already. A nil
// err records nothing.
func (l *List) Wrap(err error) {
	switch {
	case err == nil:
	case errors.Is(err, l.sentinel):
		l.errs = append(l.errs, err)
	default:
		l.errs = append(l.errs, fmt.Errorf("%w: %w", l.sentinel, err))
	}
}

// Err returns nil when nothing was recorded, else every error recorded,
// joined in the order they were.
func (l *List) Err() error { return errors.Join(l.errs...) }
