package skilltest

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestSkillWritesTheFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	got := Skill(t, dir, "pdf", "Read PDFs.", map[string]string{"scripts/run.sh": "#!/bin/sh\n", "ref/notes.md": "notes\n"})
	if got != filepath.Join(dir, "pdf") {
		t.Fatalf("Skill returned %s", got)
	}
	if md := ReadFile(t, filepath.Join(got, "SKILL.md")); md != "---\nname: pdf\ndescription: Read PDFs.\n---\n# pdf\n" {
		t.Errorf("SKILL.md = %q", md)
	}
	for p, want := range map[string]fs.FileMode{"scripts/run.sh": 0o755, "ref/notes.md": 0o644, "SKILL.md": 0o644} {
		info, err := os.Stat(filepath.Join(got, filepath.FromSlash(p)))
		if err != nil || info.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want mode %v", p, info, err, want)
		}
	}
	Skill(t, dir, "own", "", map[string]string{"SKILL.md": "custom\n"})
	if md := ReadFile(t, filepath.Join(dir, "own", "SKILL.md")); md != "custom\n" {
		t.Errorf("a SKILL.md in files did not replace the made one: %q", md)
	}
}

func TestSkillMDExtraFields(t *testing.T) {
	t.Parallel()
	got := SkillMD("pdf", "Read PDFs.", "metadata:\n  author: agent-7", "license: MIT")
	if want := "---\nname: pdf\ndescription: Read PDFs.\nmetadata:\n  author: agent-7\nlicense: MIT\n---\n# pdf\n"; got != want {
		t.Errorf("SkillMD = %q, want %q", got, want)
	}
}

func TestAppend(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "dir", "s.jsonl")
	Append(t, p, "a")
	AppendLines(t, p, "b", "c")
	AppendLines(t, p)
	if got := ReadFile(t, p); got != "ab\nc\n" {
		t.Errorf("file = %q", got)
	}
	if !Exists(p) || Exists(p+".not") {
		t.Error("Exists is wrong")
	}
	if err := os.Symlink("nowhere", p+".link"); err != nil {
		t.Fatal(err)
	}
	if !Exists(p + ".link") {
		t.Error("a dangling link does not exist")
	}
}
