package materialize

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/skillsync/skillsync/internal/platform"
)

// TestChmodDirLeavesAFileAlone: a recycled staging folder that another
// process swaps, after it was looked at, for a hard link to a file of
// someone else's (a root sync, a file of another user's) is not a
// folder: its mode is left as it is, never set to the folder's 0755.
func TestChmodDirLeavesAFileAlone(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("modes are not Unix modes here")
	}
	for _, held := range []bool{true, false} {
		dir, other := t.TempDir(), t.TempDir()
		victim := filepath.Join(other, "secret")
		if err := os.WriteFile(victim, []byte("s"), 0o600); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "recycled")
		if err := os.Link(victim, p); err != nil {
			t.Skip("no hard links here:", err)
		}
		d := dest{}
		if held {
			tree, err := platform.OpenTree(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer tree.Close()
			d = dest{tree}
		}
		if err := d.chmodDir(p, 0o755); err == nil {
			t.Errorf("held %v: chmodDir of a file succeeded", held)
		}
		info, err := os.Stat(victim)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o600 {
			t.Errorf("held %v: the other name's file is now %v, was 0600", held, info.Mode().Perm())
		}
	}
}
