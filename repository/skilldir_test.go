package repository_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/repository"
)

func TestValidateOnDisk(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	skilltest.Skill(t, dir, "good", "Does good.", nil)
	skilltest.Skill(t, dir, "bad", "Does bad.", map[string]string{"SKILL.md": skilltest.SkillMD("other", "Named otherwise.")})
	checked, err := repository.Validate(ctx, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	lax, err := repository.Validate(ctx, dir, false)
	if err != nil || len(lax) != 2 || !lax[0].Valid || !lax[1].Valid {
		t.Errorf("without strict a warning is no error: %+v, %v", lax, err)
	}
	byPath := map[string]repository.Checked{}
	for _, c := range checked {
		byPath[c.Path] = c
	}
	good, bad := byPath[filepath.Join(dir, "good")], byPath[filepath.Join(dir, "bad")]
	if !good.Valid || good.Name != "good" || bad.Valid || len(bad.Problems) == 0 {
		t.Fatalf("checked %+v", checked)
	}
	if f := bad.Problems[0].File; !filepath.IsAbs(f) || !strings.HasPrefix(f, dir) {
		t.Errorf("problem file %q is not a path on disk", f)
	}
	// A SKILL.md names its folder.
	one, err := repository.Validate(ctx, filepath.Join(dir, "good", "SKILL.md"), true)
	if err != nil || len(one) != 1 || !one[0].Valid {
		t.Errorf("validate a SKILL.md: %+v, %v", one, err)
	}
	if _, err := repository.Validate(ctx, t.TempDir(), false); !errors.Is(err, repository.ErrNoSkill) {
		t.Errorf("an empty folder: %v, want ErrNoSkill", err)
	}
	if _, err := repository.Validate(ctx, filepath.Join(dir, "good", "notes.txt"), false); err == nil {
		t.Error("a missing path validated")
	}
}

func TestOpenSkillFileStaysInTheSkill(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := skilltest.Skill(t, root, "pdf", "Read PDFs.", map[string]string{"ref/forms.md": "forms"})
	skilltest.WriteFile(t, filepath.Join(root, "secret.txt"), "secret")
	if err := os.Symlink(filepath.Join(root, "secret.txt"), filepath.Join(dir, "leak.txt")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	f, err := repository.OpenSkillFile("pdf", "ref/forms.md", dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(f)
	f.Close()
	if string(data) != "forms" {
		t.Errorf("read %q", data)
	}
	for file, want := range map[string]string{
		"../secret.txt":             "leads out of the skill",
		"/etc/passwd":               "absolute paths are refused",
		"leak.txt":                  "a symbolic link leads out of the skill",
		"missing.md":                "no such file in the skill",
		"ref":                       "is a directory",
		`..\secret.txt`:             "leads out of the skill",
		filepath.Join("ref", "..."): "no such file",
	} {
		if f, err := repository.OpenSkillFile("pdf", file, dir, nil); err == nil || !strings.Contains(err.Error(), want) {
			if f != nil {
				f.Close()
			}
			t.Errorf("open %s: %v, want %q", file, err, want)
		}
	}
}
