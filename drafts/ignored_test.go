package drafts

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/workspace"
)

// TestDraftsLeaveOutWhatGitIgnores: in a workspace that is a git work
// tree, a skill folder is proposed without what git ignores there (the
// proposal names it), a draft is inspected, listed and hashed without
// it, so its hash is the one the folder has without those files; the
// hash of a local skill a promotion archives is taken the same way.
// Outside a work tree the same folder is copied whole, as before.
func TestDraftsLeaveOutWhatGitIgnores(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := t.TempDir()
	r := gittest.NewRepo(t, "main")
	r.Write(".gitignore", ".env\nnode_modules/\n", 0)
	l := workspace.New(r.Dir, "")
	d := NewFolder(l, 1024).WithEnv(hostenv.New(home, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}))
	extra := map[string]string{"notes.md": "notes\n", ".env": "API_KEY=sk-live-123\n", "node_modules/x/i.js": "j\n"}
	src := skilltest.Skill(t, l.SkillsDir(), "pdf", "The pdf skill.", extra)
	clean := skilltest.Skill(t, t.TempDir(), "pdf", "The pdf skill.", map[string]string{"notes.md": "notes\n"})

	dr, left, err := d.proposeDir(ctx, src, "pdf", now, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(left.Names, []string{".env", "node_modules/"}) || left.String() != ".env, node_modules/" {
		t.Errorf("left out %+v", left)
	}
	for _, name := range []string{".env", "node_modules"} {
		if _, err := os.Lstat(filepath.Join(dr.Dir, name)); err == nil {
			t.Errorf("the draft holds %s, which git ignores in %s", name, src)
		}
	}
	want, err := d.dirHash(ctx, clean)
	if err != nil {
		t.Fatal(err)
	}
	if !dr.Valid || dr.Hash != want || len(dr.Files) != 2 {
		t.Fatalf("draft %+v, want hash %s", dr, want)
	}
	if h, err := d.dirHash(ctx, src); err != nil || h != want {
		t.Errorf("hash of the workspace skill = %s, %v; want %s, as without what git ignores", h, err, want)
	}

	// A file git ignores put into the draft (by hand, or by an agent's
	// proposal) is listed as ignored, and left out of the files and the
	// hash a promotion sends.
	skilltest.WriteFile(t, filepath.Join(dr.Dir, ".env"), "API_KEY=sk-live-456\n")
	again, err := d.Inspect(ctx, "pdf")
	if err != nil {
		t.Fatal(err)
	}
	if !again.Valid || again.Hash != want || len(again.Files) != 2 || !slices.Equal(again.Ignored.Names, []string{".env"}) {
		t.Errorf("inspected with a .env: %+v", again)
	}
	fsys, err := again.FS()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Open(".env"); !os.IsNotExist(err) {
		t.Errorf("the draft's FS opens .env: %v", err)
	}

	// Outside a work tree nothing is left out.
	other, _ := newDrafts(t)
	outside := skilltest.Skill(t, t.TempDir(), "pdf", "The pdf skill.", extra)
	dr, left, err = other.proposeDir(ctx, outside, "pdf", now, false)
	if err != nil || left.Names != nil || !skilltest.Exists(filepath.Join(dr.Dir, ".env")) || len(dr.Files) != 4 || dr.Ignored.Names != nil {
		t.Errorf("proposal outside a work tree: %+v, %+v, %v", dr, left, err)
	}
}

// TestProposeSaysASkillFileIsIgnored: a skill folder whose .gitignore
// names SKILL.md is refused with the reason, not "no SKILL.md in it".
func TestProposeSaysASkillFileIsIgnored(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	l := workspace.New(t.TempDir(), "")
	d := NewFolder(l, 1024).WithEnv(hostenv.New(home, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}))
	src := skilltest.Skill(t, t.TempDir(), "pdf", "The pdf skill.", map[string]string{".gitignore": "SKILL.md\n"})
	_, _, err := d.proposeDir(context.Background(), src, "pdf", now, false)
	if err == nil || !strings.Contains(err.Error(), ".gitignore rule leaves out") {
		t.Errorf("propose of a folder whose SKILL.md its .gitignore names: %v", err)
	}
}
