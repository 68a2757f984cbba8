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

// TestARecordsFolderReplacedIsMadeAgain: a file, or a link to a folder
// elsewhere, in place of .records is removed (the link, not what it leads
// to) and the folder made again, rather than failing every sync.
func TestARecordsFolderReplacedIsMadeAgain(t *testing.T) {
	t.Parallel()
	for _, planted := range []string{"file", "link"} {
		t.Run(planted, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			root := t.TempDir()
			rec := filepath.Join(root, recordsName)
			outside := t.TempDir()
			switch planted {
			case "file":
				if err := os.WriteFile(rec, []byte("junk"), 0o644); err != nil {
					t.Fatal(err)
				}
			case "link":
				if err := os.Symlink(outside, rec); err != nil {
					t.Fatal(err)
				}
			}
			c := open(t, root)
			res := c.SyncSource(ctx, Source{Name: "a", Revision: "r1", Skills: []Skill{mkSkill("x", v1)}})
			if len(res.Errors) > 0 {
				t.Fatal(res.Errors)
			}
			if err := c.Commit(ctx); err != nil {
				t.Fatalf("commit over a %s at .records: %v", planted, err)
			}
			c.Close()
			if info, err := os.Lstat(rec); err != nil || !info.IsDir() {
				t.Errorf(".records is not a folder again: %v", err)
			}
			if ents, _ := os.ReadDir(outside); len(ents) > 0 {
				t.Errorf("records were written through the link: %d entries", len(ents))
			}
		})
	}
}
