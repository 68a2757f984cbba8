package materialize

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestStagingPool covers the folders an earlier run left in staging: the
// first maxPool are kept to build in, each handed out only if it is
// still a folder that has settled when a build asks for it; settled ones
// past maxPool and anything that is not a folder are removed; unsettled
// ones past maxPool are left for a later run.
func TestStagingPool(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		settle      time.Duration
		wantLeft    int  // folders in staging once the removals are done
		wantHanded  bool // take hands a folder out
		replaceLast bool // the folder take comes to first becomes a link
	}{
		{"settled", 0, maxPool, true, false},
		{"fresh", time.Hour, maxPool + 2, false, false},
		{"replaced by a link after the listing", 0, maxPool, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			staging := filepath.Join(root, "staging")
			for i := range maxPool + 2 {
				if err := os.MkdirAll(filepath.Join(staging, fmt.Sprintf("d%04d", i)), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(staging, "stray"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			w, err := newWriter(staging, filepath.Join(root, "marker"), c.settle)
			if err != nil {
				t.Fatal(err)
			}
			w.tidy()
			entries, err := os.ReadDir(staging)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != c.wantLeft {
				t.Fatalf("staging holds %d entries after tidying, want %d folders", len(entries), c.wantLeft)
			}
			outside := t.TempDir()
			last := filepath.Join(staging, fmt.Sprintf("d%04d", maxPool-1))
			if c.replaceLast {
				if err := os.Remove(last); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(outside, last); err != nil {
					t.Fatal(err)
				}
			}
			dir := w.take()
			switch {
			case !c.wantHanded && dir != "":
				t.Errorf("take handed out %s, which has not settled", dir)
			case c.wantHanded && dir == "":
				t.Error("take handed out no folder")
			case c.replaceLast && dir == last:
				t.Errorf("take handed out %s, now a link to %s", dir, outside)
			case c.wantHanded && !c.replaceLast && dir != last:
				t.Errorf("take handed out %s, want the last listed, %s", dir, last)
			}
		})
	}
}
