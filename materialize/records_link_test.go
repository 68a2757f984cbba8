package materialize

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestPruneNeverFollowsARecordsLink: a .records folder planted as a link to
// another cache is not pruned through.
func TestPruneNeverFollowsARecordsLink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := t.TempDir()
	c := open(t, root)
	for _, s := range []string{"a", "b"} {
		res := c.SyncSource(ctx, Source{Name: s, Revision: "r1", Skills: []Skill{mkSkill("x"+s, v1)}})
		if len(res.Errors) > 0 {
			t.Fatal(res.Errors)
		}
	}
	if err := c.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	c.Close()
	// Move the real records away and plant a link to "another workspace's" records folder.
	other := t.TempDir()
	rec := filepath.Join(root, recordsName)
	ents, _ := os.ReadDir(rec)
	for _, e := range ents {
		data, _ := os.ReadFile(filepath.Join(rec, e.Name()))
		os.WriteFile(filepath.Join(other, e.Name()), data, 0o644)
	}
	victim := filepath.Join(other, "0000000000000000000000000000000000000000000000000000000000000001.skills")
	os.WriteFile(victim, []byte("someone else's record"), 0o644)
	os.RemoveAll(rec)
	if err := os.Symlink(other, rec); err != nil {
		t.Fatal(err)
	}
	c = open(t, root)
	c.Prune([]string{"a"})
	if err := c.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("a file outside the cache, reached through the .records link, was deleted: %v", err)
	}
	if info, _ := os.Lstat(rec); info.Mode()&os.ModeSymlink != 0 {
		t.Logf(".records is still a link after the sync")
	}
}
