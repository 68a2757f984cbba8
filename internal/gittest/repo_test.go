package gittest

import (
	"fmt"
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

// TestPackedTags: the file is what fmt makes of the same refs, and git
// reads every ref of it.
func TestPackedTags(t *testing.T) {
	t.Parallel()
	r := NewRepo(t, "main")
	r.Write("a.txt", "a", 0)
	head := r.Commit("first")
	r.PackedTags(head, 1234, "t", 5)
	var want strings.Builder
	want.WriteString("# pack-refs with: peeled fully-peeled sorted \n")
	fmt.Fprintf(&want, "%s refs/heads/main\n", head)
	for i := 0; i < 1234; i++ {
		fmt.Fprintf(&want, "%s refs/tags/t%05d\n", head, i)
	}
	got, err := os.ReadFile(filepath.Join(r.Dir, ".git", "packed-refs"))
	if err != nil || string(got) != want.String() {
		t.Errorf("packed-refs differs from fmt's (%d bytes, want %d): %v", len(got), want.Len(), err)
	}
	// The loose ref of main is older than the file: git reads the file.
	if n := strings.Count(r.Git("for-each-ref", "--format=%(refname)", "refs/tags"), "\n") + 1; n != 1234 {
		t.Errorf("git reads %d tags, want 1234", n)
	}
}

// TestCommitFiles: the commit git fast-import makes is the one git add
// and git commit make of the same files.
func TestCommitFiles(t *testing.T) {
	t.Parallel()
	files := map[string]string{"a.txt": "a\n", "dir/b.txt": "b", "dir/sub/c": "", "z": "last\n"}
	added := NewRepo(t, "main")
	for name, data := range files {
		added.Write(name, data, 0)
	}
	want := added.Commit("files")
	imported := NewRepo(t, "main")
	if got := imported.CommitFiles("main", "files", files); got != want {
		t.Errorf("git fast-import made %s, git commit %s", got, want)
	}
	if loose, _ := filepath.Glob(filepath.Join(imported.Dir, ".git", "objects", "??")); len(loose) > 0 {
		t.Errorf("the commit's objects are loose: %v", loose)
	}
	// On top of the branch, as a second git commit would be.
	added.Write("more.txt", "more", 0)
	want = added.Commit("more")
	if got := imported.CommitFiles("main", "more", map[string]string{"more.txt": "more"}); got != want {
		t.Errorf("the second commit: git fast-import made %s, git commit %s", got, want)
	}
	// An executable file, on a branch whose ref git gc packed.
	added.Write("run.sh", "#!/bin/sh\n", 0o755)
	want = added.Commit("exec")
	imported.Git("gc", "-q")
	if got := imported.ImportCommit("main", "exec", map[string]File{"run.sh": {Data: "#!/bin/sh\n", Mode: 0o755}}); got != want {
		t.Errorf("the executable's commit: git fast-import made %s, git commit %s", got, want)
	}
}
