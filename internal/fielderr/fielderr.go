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
	l.errs = append(l.errs, &Field{sentinel: l.sentinel, Name: field, Value: value, Why: why})
}

// Field is one bad field, as Add records it.
type Field struct {
	sentinel error
	Name     string
	Value    any
	Why      string
}

func (f *Field) Error() string {
	return fmt.Sprintf("%v: %s = %v: %s", f.sentinel, f.Name, f.Value, f.Why)
}

// Unwrap returns the sentinel of the List that recorded f.
func (f *Field) Unwrap() error { return f.sentinel }

// Adopt records, under l's sentinel, the fields of err, which a check of
// another package found (a front-end's options passed on to logsink's,
// under the same names): each renamed by rename where it has an entry.
// Errors of err that are not a Field are wrapped (Wrap). A nil err
// records nothing. So a user reads every bad field in the terms of the
// package they called.
func (l *List) Adopt(err error, rename map[string]string) {
	var joined interface{ Unwrap() []error }
	errs := []error{err}
	if errors.As(err, &joined) {
		errs = joined.Unwrap()
	}
	for _, e := range errs {
		var f *Field
		if e == nil {
			continue
		}
		if !errors.As(e, &f) {
			l.Wrap(e)
			continue
		}
		name := f.Name
		if to, ok := rename[name]; ok {
			name = to
		}
		l.Add(name, f.Value, f.Why)
	}
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
