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
