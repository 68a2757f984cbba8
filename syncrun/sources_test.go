package syncrun

import (
	"testing"

	"github.com/skillsync/skillsync/lock"
)

// TestPinned: a source is opened at the lock's revision under --frozen,
// and under --locked unless it is moved; otherwise, or with no lock, at
// no pin at all.
func TestPinned(t *testing.T) {
	t.Parallel()
	pins := lock.New()
	pins.Sources["team"] = &lock.Source{Revision: "abc"}
	for _, c := range []struct {
		name   string
		pins   *lock.File
		source string
		opts   Options
		want   string
	}{
		{"plain sync", pins, "team", Options{}, ""},
		{"frozen", pins, "team", Options{Frozen: true}, "abc"},
		{"locked", pins, "team", Options{Locked: true}, "abc"},
		{"locked, moved", pins, "team", Options{Locked: true, Move: []string{"team"}}, ""},
		{"locked, another moved", pins, "team", Options{Locked: true, Move: []string{"other"}}, "abc"},
		{"frozen, not in the lock", pins, "new", Options{Frozen: true}, ""},
		{"no lock read", nil, "team", Options{Frozen: true}, ""},
	} {
		if got := pinned(c.pins, c.source, c.opts); got != c.want {
			t.Errorf("%s: pinned %q, want %q", c.name, got, c.want)
		}
	}
	var none *Sources
	none.End() // a sync that opened nothing ends nothing
}
