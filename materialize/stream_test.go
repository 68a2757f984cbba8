package materialize

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/skillsync/skillsync/internal/skillhash"
	"github.com/skillsync/skillsync/skill"
)

// bigSkill is a skill of n files sharing one blob of size bytes, the way
// a hostile git tree points many entries at one blob.
func bigSkill(name string, n, size int) Skill {
	blob := bytes.Repeat([]byte("z"), size)
	fsys := fstest.MapFS{"SKILL.md": {Data: []byte("---\nname: " + name + "\n---\n")}}
	for i := range n {
		fsys[fmt.Sprintf("blob/%03d", i)] = &fstest.MapFile{Data: blob, Mode: 0o644}
	}
	list, _ := skill.ListFiles(fsys, name, 0)
	return Skill{Name: name, Files: fsys, List: list}
}

// allocated returns the bytes the Go heap allocated while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// expectedHash is the skill hash of s computed with every file in memory.
func expectedHash(t *testing.T, s Skill) Hash {
	t.Helper()
	h := skillhash.New()
	for _, f := range s.List {
		data, err := fs.ReadFile(s.Files, f.Path)
		if err != nil {
			t.Fatal(err)
		}
		addContent(h, f.Path, data)
	}
	return h.Sum()
}

func TestStreamingBoundsMemory(t *testing.T) {
	// Not parallel: it measures the memory of the whole process, which parallel tests would add to.
	const n, size = 16, 4 << 20 // 64 MiB in all
	ctx := context.Background()
	root := t.TempDir()
	s := bigSkill("big", n, size)
	var res Result
	alloc := allocated(func() {
		c := open(t, root)
		res = c.SyncSource(ctx, Source{Name: "src", Revision: "r1", Skills: []Skill{s}})
		if err := c.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		c.Close()
	})
	if len(res.Errors) > 0 || len(res.Changes) != 1 {
		t.Fatalf("sync: %+v", res)
	}
	t.Logf("writing %d MiB allocated %d KiB", n*size>>20, alloc>>10)
	if alloc > 8<<20 {
		t.Errorf("writing %d MiB allocated %d MiB: contents are held in memory", n*size>>20, alloc>>20)
	}
	if res.Changes[0].After != expectedHash(t, s) {
		t.Error("the streamed hash differs from the framed hash of the whole files")
	}
	info, err := os.Stat(filepath.Join(root, "src", "big", "blob", "007"))
	if err != nil || info.Size() != size {
		t.Fatalf("a streamed file: %v %v", info, err)
	}

	// The same content at a new revision is read and hashed, and neither
	// held nor written.
	var st Stats
	alloc = allocated(func() {
		c := open(t, root)
		res = c.SyncSource(ctx, Source{Name: "src", Revision: "r2", Skills: []Skill{s}})
		if err := c.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		st = c.Stats()
		c.Close()
	})
	if len(res.Errors) > 0 || len(res.Changes) != 0 || st.Written != 0 || st.Unchanged != n+1 {
		t.Errorf("unchanged content: %+v %+v", res, st)
	}
	t.Logf("hashing %d MiB allocated %d KiB", n*size>>20, alloc>>10)
	if alloc > 8<<20 {
		t.Errorf("hashing %d MiB allocated %d MiB", n*size>>20, alloc>>20)
	}
}

func TestSkillSizeCap(t *testing.T) {
	// Not parallel: it measures the memory of the whole process, which parallel tests would add to.
	ctx := context.Background()
	root := t.TempDir()
	// 300 entries of one 10 MiB blob: 3 GiB declared, refused before a
	// byte is read.
	huge := bigSkill("huge", 300, 10<<20)
	small := mkSkill("small", v1)
	var res Result
	alloc := allocated(func() {
		c := open(t, root)
		res = c.SyncSource(ctx, Source{Name: "src", Revision: "r1", Skills: []Skill{huge, small}, MaxSkillSize: 64 << 20})
		if err := c.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		c.Close()
	})
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Error(), "huge") || !strings.Contains(res.Errors[0].Error(), "limit") {
		t.Errorf("errors = %v, want one naming the skill and the limit", res.Errors)
	}
	if alloc > 8<<20 {
		t.Errorf("refusing a 3 GiB skill allocated %d MiB", alloc>>20)
	}
	if _, err := os.Stat(filepath.Join(root, "src", "huge")); err == nil {
		t.Error("the skill over the cap was written")
	}
	if readFile(t, filepath.Join(root, "src", "small", "ref/notes.md")) != v1["ref/notes.md"] {
		t.Error("the other skill was not written")
	}

	// A listing that understates sizes is caught as the files are opened.
	liar := bigSkill("liar", 300, 1<<20)
	for i := range liar.List {
		liar.List[i].Size = 1
	}
	c := open(t, root)
	res = c.SyncSource(ctx, Source{Name: "src", Revision: "r2", Skills: []Skill{liar, small}, MaxSkillSize: 8 << 20})
	if err := c.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Error(), "liar") {
		t.Errorf("errors = %v, want one naming the skill", res.Errors)
	}
	if _, err := os.Stat(filepath.Join(root, "src", "liar")); err == nil {
		t.Error("the skill over the cap was written")
	}
}
