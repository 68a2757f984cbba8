package materialize

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestRenameSource: the record and folder of a source move to its new
// name, and the move is committed with the manifest; a sync killed after
// the folder moved and before its commit left the record under the old
// name, which the next one takes along to the folder. A name that is not
// one safe path component is refused, and nothing is done for a source
// the cache does not hold or a new name it holds already.
func TestRenameSource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, killed := range []bool{false, true} {
		root := t.TempDir()
		syncOnce(t, root, "r1", mkSkill("a", v1))
		if killed {
			if err := os.Rename(filepath.Join(root, "src"), filepath.Join(root, "team")); err != nil {
				t.Fatal(err)
			}
		}
		c := open(t, root)
		if err := c.RenameSource("src", "team"); err != nil {
			t.Fatalf("killed %v: %v", killed, err)
		}
		if err := c.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		c.Close()
		m, err := ReadManifest(root)
		if err != nil || m.Sources["src"] != nil || m.Sources["team"] == nil || m.Sources["team"].Revision != "r1" {
			t.Fatalf("killed %v: manifest %+v (%v)", killed, m, err)
		}
		if got := readFile(t, filepath.Join(root, "team", "a", "SKILL.md")); got != v1["SKILL.md"] {
			t.Errorf("killed %v: the skill under its new name holds %q", killed, got)
		}
		if _, err := os.Lstat(filepath.Join(root, "src")); err == nil {
			t.Errorf("killed %v: the old folder is still there", killed)
		}
		c = open(t, root)
		for _, tc := range []struct{ from, to string }{{"gone", "other"}, {"team", "team"}} {
			if err := c.RenameSource(tc.from, tc.to); err != nil {
				t.Errorf("RenameSource(%q, %q) = %v, want nothing done", tc.from, tc.to, err)
			}
		}
		if err := c.RenameSource("team", "../out"); err == nil {
			t.Error("a new name out of the cache was taken")
		}
		c.Close()
	}
}
