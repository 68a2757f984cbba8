package agent

import (
	"testing"
	"time"
)

// TestParseMarker: the usage file's name of the last hook's call, as
// each skillsync wrote it (bare, numbered, numbered with its time), and
// hostile ones, parse to the call, its number and its time, or to none.
func TestParseMarker(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 4, 1, 0, 0, 0, 123456789, time.UTC)
	for _, c := range []struct {
		marker, call string
		seq          seqRef
		at           time.Time
	}{
		{"claude toolu_1", "claude toolu_1", seqRef{}, time.Time{}},
		{"claude toolu_1 J/3", "claude toolu_1", seqRef{"J", 3}, time.Time{}},
		{numbered("claude", "toolu_1", seqRef{"J", 3}, at), "claude toolu_1", seqRef{"J", 3}, at.Truncate(time.Millisecond)},
		{"claude toolu_1 J/3 yesterday", "claude toolu_1", seqRef{"J", 3}, time.Time{}},
		{"claude toolu_1 J/-3", "claude toolu_1", seqRef{}, time.Time{}},
		{"claude toolu_1 J/18446744073709551615", "claude toolu_1", seqRef{}, time.Time{}},
		{"claude toolu_1 J/0", "claude toolu_1", seqRef{}, time.Time{}},
		{"claude toolu_1 /3", "claude toolu_1", seqRef{}, time.Time{}},
	} {
		call, seq, when := parseMarkerAt(c.marker)
		if call != c.call || seq != c.seq || !when.Equal(c.at) {
			t.Errorf("parseMarkerAt(%q) = %q, %v, %v; want %q, %v, %v", c.marker, call, seq, when, c.call, c.seq, c.at)
		}
	}
}
