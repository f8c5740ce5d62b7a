package natssink

import "testing"

// captures follows JetStream's subject filters: "*" is one token, a last
// ">" one or more.
func TestCapturesFollowsTheWildcards(t *testing.T) {
	for _, tc := range []struct {
		filter, subject string
		want            bool
	}{
		{"a.b", "a.b", true}, {"a.b", "a.c", false}, {"a.b", "a.b.c", false},
		{"a.*", "a.b", true}, {"a.*", "a", false}, {"a.*", "a.b.c", false},
		{"a.*.c", "a.b.c", true}, {"a.*.c", "a.b.d", false},
		{"a.>", "a.b", true}, {"a.>", "a.b.c", true}, {"a.>", "a", false},
		{">", "a", true}, {">", "a.b", true}, {"*", "a", true}, {"*", "a.b", false},
	} {
		if got := captures([]string{"other.x", tc.filter}, tc.subject); got != tc.want {
			t.Errorf("captures(%q, %q) = %v, want %v", tc.filter, tc.subject, got, tc.want)
		}
	}
}
