package materialize

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// twoSkills is a source of two skills at one version (v is "1" or "2").
func twoSkills(v string) []Skill {
	return []Skill{
		mkSkill("a", map[string]string{"SKILL.md": "---\nname: a\ndescription: d\n---\n", "ref/notes.md": "a notes " + v}),
		mkSkill("b", map[string]string{"SKILL.md": "---\nname: b\ndescription: d\n---\n", "ref/notes.md": "b notes " + v}),
	}
}

// filesRecord is the path of the file records src's record names now.
func filesRecord(t *testing.T, c *Cache) string {
	t.Helper()
	rec := c.Manifest().Sources["src"]
	if rec == nil || rec.filesRef.IsZero() {
		t.Fatal("the cache names no file records of src")
	}
	return recordPath(c.root, rec.filesRef, filesExt)
}

// File records read ahead, while the caller goes on reading the
// manifest, are what the sync then uses: once read they are not read
// again, so their file may go.
func TestFileRecordsReadAheadAreTheOnesUsed(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	syncOnce(t, root, "r1", twoSkills("1")...)

	c := open(t, root)
	revision, read := c.ReadAhead("src")
	if read == nil || revision != "r1" {
		t.Fatalf("ReadAhead = %q, %v; want r1 and a reader", revision, read != nil)
	}
	done := make(chan struct{})
	go func() {
		read()
		close(done)
	}()
	// What a sync reads meanwhile (the race detector watches).
	_ = c.Current(Source{Name: "src", Revision: "r1"})
	_ = c.Manifest().Sources["src"].ExcludedOf(map[string]bool{"a": true})
	<-done
	if err := os.Remove(filesRecord(t, c)); err != nil {
		t.Fatal(err)
	}
	res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "r2", Skills: twoSkills("2")})
	if len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	if w := c.OpenWarnings(); len(w) > 0 {
		t.Fatalf("the records read ahead were read again: %v", w)
	}
	if err := c.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if d := verifyCache(t, root); len(d) != 0 {
		t.Fatalf("the cache differs from its record: %v", d)
	}
	if _, read := open(t, root).ReadAhead("src"); read == nil {
		t.Error("ReadAhead found nothing to read after a sync")
	}
}

// Damaged file records read ahead are found as when read at need: the
// sync warns, hashes the source's live files again and repairs them.
func TestDamagedFileRecordsReadAheadAreNotTrusted(t *testing.T) {
	t.Parallel()
	for _, ahead := range []bool{false, true} {
		root := t.TempDir()
		syncOnce(t, root, "r1", twoSkills("1")...)
		c := open(t, root)
		if err := os.WriteFile(filesRecord(t, c), []byte("not a record"), 0o644); err != nil {
			t.Fatal(err)
		}
		// A live file the record no longer vouches for.
		if err := os.WriteFile(filepath.Join(root, "src", "b", "ref", "notes.md"), []byte("edited"), 0o644); err != nil {
			t.Fatal(err)
		}
		if ahead {
			_, read := c.ReadAhead("src")
			read()
		}
		res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "r2", Skills: twoSkills("1")})
		if len(res.Errors) > 0 {
			t.Fatal(res.Errors)
		}
		warned := strings.Join(c.OpenWarnings(), "\n")
		if !strings.Contains(warned, "file records of source src cannot be used") {
			t.Errorf("ahead %v: warnings %q", ahead, warned)
		}
		if err := c.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
		c.Close()
		if got := readFile(t, filepath.Join(root, "src", "b", "ref", "notes.md")); got != "b notes 1" {
			t.Errorf("ahead %v: the edited file holds %q after the sync", ahead, got)
		}
		if d := verifyCache(t, root); len(d) != 0 {
			t.Errorf("ahead %v: the cache differs from its record: %v", ahead, d)
		}
	}
}

// Commit writes the records while it swaps the skills in. A skill whose
// swap fails keeps its old record, and the records on disk say so: the
// ones written beside the swaps are written again.
func TestAFailedSwapKeepsTheOldRecordOnDisk(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	first, _ := syncOnce(t, root, "r1", twoSkills("1")...)
	before := map[string]Hash{}
	for _, ch := range first {
		before[ch.Name] = ch.After
	}

	c := open(t, root)
	res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "r2", Skills: twoSkills("2")})
	if len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	live := filepath.Join(root, "src", "a")
	removed := 0
	for _, s := range c.writer.pending {
		if s.live == live || strings.HasPrefix(s.live, live+string(filepath.Separator)) {
			if err := os.RemoveAll(s.staged); err != nil { // the swap cannot be made
				t.Fatal(err)
			}
			removed++
		}
	}
	if removed == 0 {
		t.Fatal("no swap of skill a is pending")
	}
	if err := c.Commit(context.Background()); err == nil || !strings.Contains(err.Error(), "swap in") {
		t.Fatalf("Commit = %v; want the swap of a failed", err)
	}
	c.Close()

	m, err := ReadManifest(root)
	if err != nil {
		t.Fatal(err)
	}
	src := m.Sources["src"]
	if src.Revision != "" {
		t.Errorf("revision %q after a failed swap; want none, so the next sync looks again", src.Revision)
	}
	if got := src.Skills["a"].Hash; got != before["a"] {
		t.Errorf("skill a is recorded as %v; want its old version %v", got, before["a"])
	}
	if got := src.Skills["b"].Hash; got == before["b"] {
		t.Error("skill b still has its old record")
	}
	if d := VerifyCache(root, m); len(d) != 0 {
		t.Fatalf("the cache differs from its record: %v", d)
	}
}
