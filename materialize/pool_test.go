package materialize

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestStagingPool covers the folders an earlier run left in staging. Up
// to maxPool are kept to build in, each handed out only if it is still a
// folder that has settled when a build asks for it. Past maxPool, the
// first maxPool that have settled are kept and the other settled ones
// removed; one that has not settled is left for a later run whatever the
// count, and anything that is not a folder is removed.
func TestStagingPool(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// old are made first, then, after a pause longer than settle when
		// settle is not 0, fresh.
		old, fresh int
		settle     time.Duration
		wantLeft   int  // folders in staging once the removals are done
		wantHanded bool // take hands a folder out
		// replace: the folder take comes to first becomes a link to a
		// folder outside after the listing.
		replace bool
	}{
		{name: "few, settled", old: 3, wantLeft: 3, wantHanded: true},
		{name: "few, settled, one replaced by a link", old: 3, wantLeft: 3, wantHanded: true, replace: true},
		{name: "few, fresh", fresh: 3, settle: time.Hour, wantLeft: 3},
		{name: "many, settled", old: maxPool + 2, wantLeft: maxPool, wantHanded: true},
		{name: "many, settled, one replaced by a link", old: maxPool + 2, wantLeft: maxPool, wantHanded: true, replace: true},
		{name: "many, fresh", fresh: maxPool + 2, settle: time.Hour, wantLeft: maxPool + 2},
		// The fresh folders sort first: the settled ones after them are
		// still the ones kept.
		{name: "many, a few settled", old: 10, fresh: maxPool, settle: time.Second, wantLeft: maxPool + 10, wantHanded: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			staging := filepath.Join(root, "staging")
			mkdirs := func(prefix string, n int) {
				for i := range n {
					if err := os.MkdirAll(filepath.Join(staging, fmt.Sprintf("%s%04d", prefix, i)), 0o755); err != nil {
						t.Fatal(err)
					}
				}
			}
			mkdirs("o", c.old) // sorts after "f"
			if c.settle > 0 && c.old > 0 {
				time.Sleep(c.settle + 100*time.Millisecond)
			}
			mkdirs("f", c.fresh)
			if err := os.WriteFile(filepath.Join(staging, "stray"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			w, err := newWriter(staging, filepath.Join(root, "marker"), c.settle)
			if err != nil {
				t.Fatal(err)
			}
			w.list() // what a build's first look does
			w.tidy()
			entries, err := os.ReadDir(staging)
			if err != nil {
				t.Fatal(err)
			}
			folders := 0
			for _, e := range entries {
				if !e.IsDir() {
					t.Errorf("%s is left in staging", e.Name())
				}
				folders++
			}
			if folders != c.wantLeft {
				t.Fatalf("staging holds %d folders after tidying, want %d", folders, c.wantLeft)
			}
			// take comes to the last folder listed that it keeps first.
			last := filepath.Join(staging, fmt.Sprintf("o%04d", min(c.old, maxPool)-1))
			outside := t.TempDir()
			if c.replace {
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
			case c.replace && dir == last:
				t.Errorf("take handed out %s, now a link to %s", dir, outside)
			case c.wantHanded && !c.replace && dir != last:
				t.Errorf("take handed out %s, want %s", dir, last)
			}
		})
	}
}

// TestUnemptiableFolderInStaging: a folder left in staging that can be
// neither emptied nor removed (here a file in it is immutable, which
// stops root too) costs the build its recycling, not the skill: it is
// built in a new folder, and the folder stays for a later run.
func TestUnemptiableFolderInStaging(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	v := func(files map[string]string) Skill { return mkSkill("a", files) }
	syncOnce(t, root, "r1", v(map[string]string{"SKILL.md": "1", "x.md": "x"}))
	// Two files change, so r2 is built whole and r1 is swapped out into
	// staging.
	syncOnce(t, root, "r2", v(map[string]string{"SKILL.md": "2", "x.md": "x2"}))
	entries, err := os.ReadDir(filepath.Join(root, stagingName))
	if err != nil || len(entries) != 1 {
		t.Fatalf("staging holds %v, %v; want the version r2 swapped out", entries, err)
	}
	stuck := filepath.Join(root, stagingName, entries[0].Name(), "x.md")
	if out, err := exec.Command("chattr", "+i", stuck).CombinedOutput(); err != nil {
		t.Skipf("cannot make a file immutable here: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("chattr", "-i", stuck).Run() })

	c, err := openCache(context.Background(), root, time.Second, CheckRecord, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := map[string]string{"SKILL.md": "3", "x.md": "x3"}
	res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "r3", Skills: []Skill{v(want)}})
	if len(res.Errors) > 0 {
		t.Fatalf("the skill failed for a folder staging could not empty: %v", res.Errors)
	}
	if err := c.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	for name, data := range want {
		if got := readFile(t, filepath.Join(root, "src", "a", name)); got != data {
			t.Errorf("%s holds %q, want %q", name, got, data)
		}
	}
	if _, err := os.Lstat(stuck); err != nil {
		t.Errorf("the immutable file went: %v", err)
	}
}
