package daemon

import (
	"context"
	"testing"
)

// TestStatChecksOnItsFirstAndEveryNthSync: the daemon's sync trusts its
// records except on the first run and every n-th, which compare stat
// data; with 0 it never does.
func TestStatChecksOnItsFirstAndEveryNthSync(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		every int
		want  string
	}{{3, "SssSssS"}, {1, "SSSSSSS"}, {0, "sssssss"}} {
		var got []byte
		sync := func(req SyncRequest) func(context.Context) error {
			return func(context.Context) error {
				got = append(got, map[bool]byte{true: 'S', false: 's'}[req.StatCheck])
				return nil
			}
		}
		run := statChecked(tt.every, sync)
		for range 7 {
			_ = run(context.Background())
		}
		if string(got) != tt.want {
			t.Errorf("every %d: runs %s, want %s", tt.every, got, tt.want)
		}
	}
}
