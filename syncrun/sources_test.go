package syncrun

import (
	"os"
	"testing"

	"github.com/skillsync/skillsync/curator"
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

// TestUsageReadRaisesItsPanicInTheSync: the usage is read on a goroutine
// of its own, but a panic there (a bug met on a hostile file) is raised
// again where the sync takes the usage, where a daemon recovers it,
// rather than ending the process; a sync that stops before that waits
// for the read and ends normally.
func TestUsageReadRaisesItsPanicInTheSync(t *testing.T) {
	t.Parallel()
	store := curator.NewStore(t.TempDir())
	// A version-1 file is read through Resolve.
	if err := os.WriteFile(store.Path(), []byte(`{"version":1,"skills":{"pdf":{"use_count":1}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	store.Resolve = func(string) (curator.Copy, bool) { panic("resolver bug") }
	stopped := ReadUsage(store)
	stopped.Wait() // no panic here: the sync stopped before it took the usage

	read := ReadUsage(store)
	defer func() {
		if p := recover(); p != "resolver bug" {
			t.Errorf("recovered %v, want the read's panic", p)
		}
	}()
	r := &Run{Report: NewReport()}
	r.LoadUsage(read)
	t.Error("LoadUsage returned after the read panicked")
}
