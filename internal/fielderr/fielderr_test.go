package fielderr

import (
	"errors"
	"testing"
)

var errBad = errors.New("bad config")

func TestListNamesEveryFieldAndWrapsTheSentinel(t *testing.T) {
	l := New(errBad)
	if l.Err() != nil {
		t.Fatalf("an empty List's Err: %v", l.Err())
	}
	l.Add("Shards", -1, "must be positive")
	l.Add("Name", "", "must not be empty")
	other := errors.New("the stream captures no subject")
	l.Wrap(other)
	l.Wrap(nil)
	l.Wrap(errBad) // wraps it already: kept as it is
	err := l.Err()
	want := "bad config: Shards = -1: must be positive\n" +
		"bad config: Name = : must not be empty\n" +
		"bad config: the stream captures no subject\n" +
		"bad config"
	if err == nil || err.Error() != want {
		t.Fatalf("Err() = %q, want %q", err, want)
	}
	if !errors.Is(err, errBad) || !errors.Is(err, other) {
		t.Fatalf("Err() %v does not wrap the sentinel and the wrapped error", err)
	}
}

// Adopt re-records another check's fields under this List's sentinel,
// renamed where asked, and wraps what is not a field.
func TestAdoptNamesTheFieldsInTheCallersTerms(t *testing.T) {
	inner := errors.New("inner: invalid")
	outer := errors.New("outer: invalid")
	other := errors.New("something else")
	found := New(inner)
	found.Add("w", "nil", "needs a writer")
	found.Add("SpillBytes", 1000, "too small")
	found.Wrap(other)
	l := New(outer)
	l.Adopt(found.Err(), map[string]string{"w": "dst"})
	l.Adopt(nil, nil)
	err := l.Err()
	if !errors.Is(err, outer) || errors.Is(err, inner) && !errors.Is(err, other) {
		t.Fatalf("err %v: want the outer sentinel", err)
	}
	want := "outer: invalid: dst = nil: needs a writer\nouter: invalid: SpillBytes = 1000: too small\nouter: invalid: inner: invalid: something else"
	if err.Error() != want {
		t.Fatalf("got %q\nwant %q", err.Error(), want)
	}
}
