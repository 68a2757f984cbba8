package gittest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoTemplateInAnOpenFolder: where other users can write the
// temporary folder (a shared /tmp), NewRepo keeps no template there and
// copies none from it, as one planted there could carry hooks every
// test's git would run; the repository still works. It sets TMPDIR, so
// it runs alone.
func TestNoTemplateInAnOpenFolder(t *testing.T) {
	tmp, err := os.MkdirTemp("", "gittest-open-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	if err := os.Chmod(tmp, 0o1777); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	r := NewRepo(t, "main")
	r.Write("a.txt", "a", 0o644)
	if head := r.Commit("first"); head == "" {
		t.Fatal("no commit")
	}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "skillsync-gittest-template") {
			t.Errorf("a template was kept in the open folder: %s", filepath.Join(tmp, e.Name()))
		}
	}
}
