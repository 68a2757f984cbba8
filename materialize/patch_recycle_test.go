package materialize

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// syncSettled runs one sync of skill whose writer takes files left in
// staging once they have been out of use for settle.
func syncSettled(t *testing.T, root, rev string, settle time.Duration, skill Skill) {
	t.Helper()
	c, err := openCache(context.Background(), root, time.Second, CheckRecord, settle, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if res := c.SyncSource(context.Background(), Source{Name: "src", Revision: rev, Skills: []Skill{skill}}); len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	if err := c.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// kept lists the files staging keeps for patches, by inode, with their
// content.
func kept(t *testing.T, root string) map[uint64]string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, stagingName))
	if err != nil {
		t.Fatal(err)
	}
	out := map[uint64]string{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), patchSuffix) {
			continue
		}
		p := filepath.Join(root, stagingName, e.Name())
		data, _ := os.ReadFile(p)
		out[stat(t, p).ino] = string(data)
	}
	return out
}

// A patch exchanges its file with the live one, which stays in staging;
// the next patch, once that file has settled, writes into it rather than
// creating a file: the live file's inode goes round, no inode is made or
// freed, and the cache verifies. Before it has settled a new file is
// made, and the kept one waits.
func TestAPatchWritesIntoTheFileTheLastOneReplaced(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no exchange of two files here")
	}
	t.Parallel()
	root := t.TempDir()
	notes := filepath.Join(root, "src", "a", "ref", "notes.md")
	syncOnce(t, root, "r1", mkSkill("a", v1))
	ino1 := stat(t, notes).ino

	v2 := maps.Clone(v1)
	v2["ref/notes.md"] = "notes v2"
	syncSettled(t, root, "r2", time.Hour, mkSkill("a", v2))
	ino2 := stat(t, notes).ino
	if got := kept(t, root); !reflect.DeepEqual(got, map[uint64]string{ino1: "notes v1"}) {
		t.Fatalf("staging keeps %v, want the replaced file (inode %d, notes v1)", got, ino1)
	}

	// Not settled: a new file, and both old ones kept.
	v3 := maps.Clone(v1)
	v3["ref/notes.md"] = "notes v3"
	syncSettled(t, root, "r3", time.Hour, mkSkill("a", v3))
	ino3 := stat(t, notes).ino
	if ino3 == ino1 || ino3 == ino2 {
		t.Errorf("a file not settled was written into (inode %d)", ino3)
	}
	if got := kept(t, root); len(got) != 2 || got[ino1] != "notes v1" || got[ino2] != "notes v2" {
		t.Errorf("staging keeps %v, want inodes %d and %d", got, ino1, ino2)
	}

	// Settled: written into, no new inode.
	v4 := maps.Clone(v1)
	v4["ref/notes.md"] = "notes v4, longer than the others"
	syncSettled(t, root, "r4", 0, mkSkill("a", v4))
	ino4 := stat(t, notes).ino
	if ino4 != ino1 && ino4 != ino2 {
		t.Errorf("the patch made inode %d, want one of the kept %d and %d", ino4, ino1, ino2)
	}
	if got, _ := tree(t, filepath.Join(root, "src", "a")); !reflect.DeepEqual(got, v4) {
		t.Errorf("live holds %v, want %v", got, v4)
	}
	if got := kept(t, root); len(got) != 2 || got[ino3] != "notes v3" {
		t.Errorf("staging keeps %v, want two files, one of them inode %d (notes v3)", got, ino3)
	}
	if diffs := verifyCache(t, root); len(diffs) > 0 {
		t.Errorf("verify: %v", diffs)
	}
}

// A kept file that has another name, or is no longer a file, is never
// written into: what it is linked with outside keeps its content.
func TestAKeptFileLinkedElsewhereIsNotWrittenInto(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no exchange of two files here")
	}
	t.Parallel()
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, keptFile, outside string)
	}{
		{"hard link outside", func(t *testing.T, keptFile, outside string) {
			if err := os.Link(keptFile, outside); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaced by a link to a file outside", func(t *testing.T, keptFile, outside string) {
			if err := os.WriteFile(outside, []byte("notes v1"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(keptFile); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, keptFile); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			syncOnce(t, root, "r1", mkSkill("a", v1))
			v2 := maps.Clone(v1)
			v2["ref/notes.md"] = "notes v2"
			syncSettled(t, root, "r2", time.Hour, mkSkill("a", v2))
			entries, err := os.ReadDir(filepath.Join(root, stagingName))
			if err != nil || len(entries) != 1 {
				t.Fatalf("staging holds %v %v, want the replaced file", entries, err)
			}
			outside := filepath.Join(t.TempDir(), "keep.md")
			tc.plant(t, filepath.Join(root, stagingName, entries[0].Name()), outside)

			v3 := maps.Clone(v1)
			v3["ref/notes.md"] = "notes v3"
			syncSettled(t, root, "r3", 0, mkSkill("a", v3))
			if data, err := os.ReadFile(outside); err != nil || string(data) != "notes v1" {
				t.Errorf("outside holds %q %v, want notes v1", data, err)
			}
			liveAndVerified(t, root, filepath.Join(root, "src", "a"), v3)
		})
	}
}

// A file a patch removes goes to staging too, kept to be written into.
func TestAPatchKeepsTheFileItRemoves(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	base := maps.Clone(v1)
	base["ref/more.md"] = "more"
	syncOnce(t, root, "r1", mkSkill("a", base))
	more := filepath.Join(root, "src", "a", "ref", "more.md")
	ino := stat(t, more).ino
	syncOnce(t, root, "r2", mkSkill("a", base))
	if got := kept(t, root); len(got) != 0 {
		t.Fatalf("a sync with nothing new kept %v", got)
	}
	syncSettled(t, root, "r3", time.Hour, mkSkill("a", v1))
	if _, err := os.Lstat(more); !os.IsNotExist(err) {
		t.Fatalf("the removed file is still live: %v", err)
	}
	if got := kept(t, root); !reflect.DeepEqual(got, map[uint64]string{ino: "more"}) {
		t.Errorf("staging keeps %v, want the removed file (inode %d)", got, ino)
	}
	liveAndVerified(t, root, filepath.Join(root, "src", "a"), v1)
}

// Files a patch left in staging are kept for patches to write into, up
// to maxFilePool; anything else that is not a folder is removed.
func TestStagingKeepsThePatchesFiles(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	staging := filepath.Join(root, "staging")
	if err := os.MkdirAll(staging, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a" + patchSuffix, "b" + patchSuffix, "stray", "c.patched"} {
		if err := os.WriteFile(filepath.Join(staging, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, err := newWriter(staging, filepath.Join(root, "marker"), 0)
	if err != nil {
		t.Fatal(err)
	}
	w.list() // what a build's first look does
	w.tidy()
	entries, err := os.ReadDir(staging)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if want := []string{"a" + patchSuffix, "b" + patchSuffix}; !reflect.DeepEqual(left, want) {
		t.Errorf("staging holds %v after tidying, want %v", left, want)
	}
	f, name := w.takeFile(int64(len("b" + patchSuffix)))
	if f == nil || name != filepath.Join(staging, "b"+patchSuffix) {
		t.Fatalf("takeFile = %v %q, want b%s", f, name, patchSuffix)
	}
	defer f.Close()
	// Handed out as it is, at its start: the patch writes over it and
	// cuts what is left (TestAShorterPatchCutsTheKeptFile).
	if at, err := f.Seek(0, io.SeekCurrent); err != nil || at != 0 {
		t.Errorf("the file handed out is at offset %d (%v), want its start", at, err)
	}
}

// Of the kept files, a patch takes one that needs no more blocks than
// its content, so that cutting the old content frees none; the ones
// passed over stay in the pool, and with only longer ones left it takes
// a longer one rather than make a file.
func TestAPatchTakesAKeptFileNoLongerThanItself(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	staging := filepath.Join(root, "staging")
	if err := os.MkdirAll(staging, 0o755); err != nil {
		t.Fatal(err)
	}
	// Taken from the end of the pool: the long ones come first.
	sizes := map[string]int{"a": 100, "b": 3 * 4096, "c": 5 * 4096}
	for name, size := range sizes {
		if err := os.WriteFile(filepath.Join(staging, name+patchSuffix), make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, err := newWriter(staging, filepath.Join(root, "marker"), 0)
	if err != nil {
		t.Fatal(err)
	}
	w.list() // what a build's first look does
	w.tidy()
	take := func(size int64, want string) {
		t.Helper()
		f, name := w.takeFile(size)
		if f == nil {
			t.Fatalf("takeFile(%d) handed out nothing, want %s", size, want)
		}
		f.Close()
		if got := strings.TrimSuffix(filepath.Base(name), patchSuffix); got != want {
			t.Errorf("takeFile(%d) = %s, want %s", size, got, want)
		}
	}
	take(4000, "a")   // one block: only a needs no more
	take(4*4096, "b") // four: b, not c
	take(10, "c")     // only c is left, longer, and still taken
	if f, name := w.takeFile(10); f != nil {
		f.Close()
		t.Errorf("the pool handed out %s a second time", name)
	}
}

// A patch shorter than the kept file it writes into leaves nothing of
// the old content past its own: the live file is the new content alone,
// and the cache verifies.
func TestAShorterPatchCutsTheKeptFile(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no exchange of two files here")
	}
	t.Parallel()
	root := t.TempDir()
	notes := filepath.Join(root, "src", "a", "ref", "notes.md")
	long := maps.Clone(v1)
	long["ref/notes.md"] = strings.Repeat("a long first version of the notes\n", 500)
	syncOnce(t, root, "r1", mkSkill("a", long))
	ino1 := stat(t, notes).ino

	v2 := maps.Clone(v1)
	v2["ref/notes.md"] = "notes v2"
	syncSettled(t, root, "r2", time.Hour, mkSkill("a", v2))
	v3 := maps.Clone(v1)
	v3["ref/notes.md"] = "v3"
	syncSettled(t, root, "r3", 0, mkSkill("a", v3))
	if ino := stat(t, notes).ino; ino != ino1 {
		t.Fatalf("the patch made inode %d, want the kept %d", ino, ino1)
	}
	if got, _ := tree(t, filepath.Join(root, "src", "a")); !reflect.DeepEqual(got, v3) {
		t.Errorf("live notes hold %d bytes (%.20q...), want %q", len(got["ref/notes.md"]), got["ref/notes.md"], v3["ref/notes.md"])
	}
	if diffs := verifyCache(t, root); len(diffs) > 0 {
		t.Errorf("verify: %v", diffs)
	}
}

func TestPagePadded(t *testing.T) {
	for _, tc := range []struct {
		buf, n int
		off    int64
		want   int
	}{
		{buf: 8192, n: 100, off: 0, want: 4096},
		{buf: 8192, n: 4096, off: 0, want: 4096},
		{buf: 8192, n: 100, off: 4000, want: 4192}, // ends at 4100: up to 8192
		{buf: 8192, n: 96, off: 4000, want: 96},    // ends on the boundary
		{buf: 4096, n: 4000, off: 100, want: 4000}, // 4100: no room for 4,092 zeros
		{buf: 8192, n: 0, off: 10, want: 4086},
	} {
		buf := make([]byte, tc.buf)
		for i := range buf {
			buf[i] = 'x'
		}
		got := pagePadded(buf, tc.n, tc.off)
		if len(got) != tc.want {
			t.Errorf("pagePadded(%d-byte buffer, %d, at %d) has %d bytes, want %d", tc.buf, tc.n, tc.off, len(got), tc.want)
			continue
		}
		if tc.want > tc.n && strings.Trim(string(got[tc.n:]), "\x00") != "" {
			t.Errorf("pagePadded(%d, at %d): the padding is not zeros", tc.n, tc.off)
		}
		if strings.Trim(string(got[:tc.n]), "x") != "" {
			t.Errorf("pagePadded(%d, at %d) changed the data", tc.n, tc.off)
		}
	}
}

// Kept files that have not settled are passed over without ending the
// search: a daemon that syncs more often than the settle leaves many,
// and the settled one past them is still taken rather than a new file
// made.
func TestUnsettledKeptFilesDoNotEndTheSearch(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	staging := filepath.Join(root, "staging")
	if err := os.MkdirAll(staging, 0o755); err != nil {
		t.Fatal(err)
	}
	put := func(name string) {
		if err := os.WriteFile(filepath.Join(staging, name+patchSuffix), make([]byte, 100), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put("a")
	const settle = 2 * time.Second
	time.Sleep(settle + settle/4)
	// Taken from the end of the pool: these come first.
	for i := range 2 * fileLooks {
		put(fmt.Sprintf("z%02d", i))
	}
	w, err := newWriter(staging, filepath.Join(root, "marker"), settle)
	if err != nil {
		t.Fatal(err)
	}
	w.list() // what a build's first look does
	w.tidy()
	f, name := w.takeFile(100)
	if f == nil {
		t.Fatalf("takeFile handed out nothing past %d files not settled, want a", 2*fileLooks)
	}
	f.Close()
	if got := strings.TrimSuffix(filepath.Base(name), patchSuffix); got != "a" {
		t.Errorf("takeFile = %s, want a (the others have not settled)", got)
	}
}

// A hard link planted as a live file goes to staging with the patch
// that replaces it, and the file of its other name keeps its times: the
// kept file's new times (which mark when it left) are set only on a
// file of one name.
func TestAPlantedHardLinkKeepsItsTimes(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no exchange of two files here")
	}
	t.Parallel()
	root := t.TempDir()
	syncOnce(t, root, "r1", mkSkill("a", v1))
	notes := filepath.Join(root, "src", "a", "ref", "notes.md")
	mtime := time.Unix(0, stat(t, notes).mtime)
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, []byte("notes v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The live file's own times, so that the record still trusts it.
	if err := os.Chtimes(outside, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(notes); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(outside, notes); err != nil {
		t.Skip(err)
	}

	v2 := maps.Clone(v1)
	v2["ref/notes.md"] = "notes v2"
	syncSettled(t, root, "r2", time.Hour, mkSkill("a", v2))
	got, err := os.Stat(outside)
	if err != nil {
		t.Fatal(err)
	}
	if !got.ModTime().Equal(mtime) {
		t.Errorf("the planted link's other name has mtime %v, want %v as it was", got.ModTime(), mtime)
	}
	if data, _ := os.ReadFile(outside); string(data) != "notes v1" {
		t.Errorf("the planted link's other name holds %q", data)
	}
	if tree, _ := tree(t, filepath.Join(root, "src", "a")); !reflect.DeepEqual(tree, v2) {
		t.Errorf("live holds %v, want %v", tree, v2)
	}
}

// Staging full of kept files none of which has settled (syncs seconds
// apart) costs a patch fileMisses looks, not one for every file: past
// that many in a row, takeFile looks at no more of them for the run and
// the patch makes a new file.
func TestAStagingOfUnsettledFilesIsNotLookedAtWhole(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	staging := filepath.Join(root, "staging")
	if err := os.MkdirAll(staging, 0o755); err != nil {
		t.Fatal(err)
	}
	const kept = 3 * fileMisses
	for i := range kept {
		if err := os.WriteFile(filepath.Join(staging, fmt.Sprintf("f%03d%s", i, patchSuffix)), make([]byte, 100), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, err := newWriter(staging, filepath.Join(root, "marker"), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer w.tidy()
	for range 3 {
		if f, name := w.takeFile(100); f != nil {
			f.Close()
			t.Fatalf("takeFile handed out %s, which has not settled", name)
		}
	}
	if left := len(w.files); left != kept-fileMisses {
		t.Errorf("three patches looked at %d of the %d files not settled, want %d", kept-left, kept, fileMisses)
	}
}
