package repository_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/fstest"
	"time"

	"github.com/skillsync/skillsync/internal/platform"
	"github.com/skillsync/skillsync/repository"
	dirsource "github.com/skillsync/skillsync/repository/dir"
	"github.com/skillsync/skillsync/repository/repositorytest"
	"github.com/skillsync/skillsync/skill"
)

func TestDirFSConformsToIOFS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repositorytest.WriteTree(t, dir, repositorytest.Fixture())
	fsys, err := repository.NewDirFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(fsys, "pdf/SKILL.md", "pdf/scripts/extract.sh", "group/docs/SKILL.md"); err != nil {
		t.Fatal(err)
	}
}

func TestDirFSRefusesEscapes(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	repositorytest.WriteTree(t, outside, map[string]repositorytest.File{"secret.txt": {Data: "secret"}})
	root := t.TempDir()
	repositorytest.WriteTree(t, root, map[string]repositorytest.File{"skill/SKILL.md": {Data: "---\nname: skill\ndescription: d\n---\n"}, "shared.txt": {Data: "shared"}})
	must(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "skill", "leak.txt")))
	must(t, os.Symlink("../shared.txt", filepath.Join(root, "skill", "inside.txt")))
	must(t, os.Symlink(outside, filepath.Join(root, "outdir")))
	realRoot, err := filepath.EvalSymlinks(root)
	must(t, err)
	must(t, os.Symlink(filepath.Join(realRoot, "shared.txt"), filepath.Join(root, "skill", "absolute.txt")))
	must(t, os.Symlink("../skill", filepath.Join(root, "skill", "loop")))

	fsys, err := repository.NewDirFS(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"skill/leak.txt", "outdir/secret.txt", "../x", "/etc/passwd"} {
		if _, err := fsys.Open(name); err == nil {
			t.Errorf("Open(%q) succeeded; it leads outside the root", name)
		}
	}
	if _, err := fsys.Open("skill/leak.txt"); !errors.Is(err, repository.ErrOutside) {
		t.Errorf("Open of a link out: %v, want ErrOutside", err)
	}
	for _, name := range []string{"skill/inside.txt", "skill/absolute.txt", "skill/loop/loop/absolute.txt"} {
		if data, err := fsReadFile(fsys, name); err != nil || data != "shared" {
			t.Errorf("%s, a link inside the root: %q, %v", name, data, err)
		}
		if info, err := fsys.Stat(name); err != nil || info.Size() != int64(len("shared")) {
			t.Errorf("Stat(%s) = %v, %v", name, info, err)
		}
	}
	if info, err := fsys.Lstat("skill/loop/absolute.txt"); err != nil || info.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Lstat through a link inside = %v, %v; want the link itself", info, err)
	}

	r := dirsource.NewLocal("l", root, repository.Options{})
	skills, problems, err := r.Skills(context.Background())
	if err != nil || len(skills) != 1 {
		t.Fatalf("skills %v, %v", skills, err)
	}
	if !slices.ContainsFunc(problems, func(p skill.Problem) bool {
		return p.Rule == "symlink-outside" && p.File == "skill/leak.txt"
	}) {
		t.Errorf("no symlink-outside problem for skill/leak.txt: %v", problems)
	}
	if !slices.ContainsFunc(problems, func(p skill.Problem) bool { return p.Rule == "symlink-outside" && p.File == "outdir" }) {
		t.Errorf("no symlink-outside problem for the directory link outdir: %v", problems)
	}
	files, _ := skill.ListFiles(skills[0].Files, skills[0].Path, 0)
	if slices.ContainsFunc(files, func(f skill.File) bool { return f.Path == "leak.txt" }) {
		t.Error("the link out of the root is listed as a file of the skill")
	}
}

// A SKILL.md that is a FIFO must be refused without waiting for a writer.
func TestFIFOSkillFileDoesNotBlock(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "fifo"), 0o755))
	must(t, platform.Mkfifo(filepath.Join(root, "fifo", "SKILL.md")))
	repositorytest.WriteTree(t, root, map[string]repositorytest.File{
		"ok/SKILL.md": {Data: "---\nname: ok\ndescription: d\n---\n"},
	})
	must(t, platform.Mkfifo(filepath.Join(root, "ok", "pipe")))

	done := make(chan struct{})
	var skills []skill.Skill
	var problems []skill.Problem
	go func() {
		defer close(done)
		skills, problems, _ = dirsource.NewLocal("l", root, repository.Options{}).Skills(context.Background())
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("discovery blocked on a FIFO")
	}
	if len(skills) != 1 || skills[0].Name != "ok" {
		t.Errorf("skills = %v", skills)
	}
	rules := map[string]bool{}
	for _, p := range problems {
		rules[p.File+":"+p.Rule] = true
	}
	if !rules["fifo/SKILL.md:skill-md-not-regular"] || !rules["ok/pipe:file-not-regular"] {
		t.Errorf("problems = %v", problems)
	}
	fsys, _ := repository.NewDirFS(root)
	if _, err := fsys.Open("ok/pipe"); !errors.Is(err, repository.ErrNotRegular) {
		t.Errorf("Open(FIFO) = %v, want ErrNotRegular", err)
	}
}

func TestSourceName(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"Team Skills": "team-skills", "acme/skills.git": "acme-skills.git", "..": "source..",
		".": "source.", "": "source", "ok_name-1.2": "ok_name-1.2", "Ünicode!": "nicode",
	} {
		if got := repository.SourceName(raw); got != want {
			t.Errorf("SourceName(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestUniqueNames(t *testing.T) {
	t.Parallel()
	got, warnings := repository.UniqueNames([]string{"a", "b", "a", "a", "a_2"})
	want := []string{"a", "b", "a_2", "a_3", "a_2_2"}
	if !slices.Equal(got, want) || len(warnings) != 3 {
		t.Errorf("UniqueNames = %v (%d warnings), want %v", got, len(warnings), want)
	}
}

func fsReadFile(fsys *repository.DirFS, name string) (string, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	buf := make([]byte, 100)
	n, _ := f.Read(buf)
	return string(buf[:n]), nil
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A Sub of a DirFS reads what the folder holds, also a Sub of a Sub and
// of "."; and one at the root costs a single allocation, the DirFS
// itself: a cache makes one for each of thousands of skills.
func TestDirFSSub(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "b", "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	fsys, err := repository.NewDirFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, chain := range [][]string{{"a", "b"}, {"a/b"}, {".", "a", ".", "b"}} {
		var sub fs.FS = fsys
		for _, d := range chain {
			if sub, err = sub.(fs.SubFS).Sub(d); err != nil {
				t.Fatalf("%q: %v", chain, err)
			}
		}
		if data, err := fs.ReadFile(sub, "f"); err != nil || string(data) != "x" {
			t.Errorf("%q: read %q, %v", chain, data, err)
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { _, _ = fsys.Sub("skill-00001") }); allocs != 1 {
		t.Errorf("Sub at the root: %v allocations, want 1", allocs)
	}
}
