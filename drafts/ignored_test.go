package drafts

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
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

	dr, left, err := d.proposeDir(ctx, src, "pdf", now, false, nil)
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
	dr, left, err = other.proposeDir(ctx, outside, "pdf", now, false, nil)
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
	_, _, err := d.proposeDir(context.Background(), src, "pdf", now, false, nil)
	if err == nil || !strings.Contains(err.Error(), ".gitignore rule leaves out") {
		t.Errorf("propose of a folder whose SKILL.md its .gitignore names: %v", err)
	}
}

// TestProposeAndPublishReadALayerSkillAsItsSync: a skill of the
// workspace's layer outside any work tree is proposed and published
// without what the layer's own .gitignore names, as the sync of the
// layer leaves it out of the targets. Judged by the skill's folder alone,
// the prod.env went into the draft and the team's source.
func TestProposeAndPublishReadALayerSkillAsItsSync(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := t.TempDir()
	l := workspace.New(t.TempDir(), "")
	env := hostenv.New(home, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"})
	d := NewFolder(l, 1024).WithEnv(env)
	skilltest.WriteFile(t, filepath.Join(l.SkillsDir(), ".gitignore"), "*.env\n")
	src := skilltest.Skill(t, l.SkillsDir(), "mine", "Mine.", map[string]string{"prod.env": "API_KEY=sk-live-456\n", "notes.md": "n\n"})
	g := &Gate{Folder: d, WorkspaceDir: l.SkillsDir()}

	dr, left, err := d.proposeDir(ctx, src, "mine", now, false, g.layers())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dr.Dir, "prod.env")); err == nil {
		t.Errorf("the draft holds prod.env, which the layer's .gitignore names")
	}
	if !slices.Equal(left.Names, []string{"prod.env"}) {
		t.Errorf("left out %+v, want prod.env", left)
	}
	if _, err := os.Lstat(filepath.Join(dr.Dir, "notes.md")); err != nil {
		t.Errorf("the draft lacks notes.md: %v", err)
	}

	w := &filesWriter{}
	res, err := publishIn(ctx, w, src, "team", "me", env, g.layers())
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(w.files, "prod.env") || !slices.Contains(w.files, "notes.md") {
		t.Errorf("published %q, want notes.md without prod.env", w.files)
	}
	if !slices.Equal(res.Ignored.Names, []string{"prod.env"}) {
		t.Errorf("publish says it left out %+v", res.Ignored)
	}
}

// filesWriter is a SkillWriter that keeps the names of the files it is
// given.
type filesWriter struct{ files []string }

func (w *filesWriter) Source() string                                    { return "team" }
func (w *filesWriter) Sync(context.Context) (repository.Revision, error) { return "r", nil }
func (w *filesWriter) Skills(context.Context) ([]skill.Skill, []skill.Problem, error) {
	return nil, nil, nil
}

func (w *filesWriter) PublishSkill(_ context.Context, _ string, fsys fs.FS, _ string) (repository.Revision, error) {
	err := fs.WalkDir(fsys, ".", func(name string, de fs.DirEntry, err error) error {
		if err == nil && !de.IsDir() {
			w.files = append(w.files, name)
		}
		return err
	})
	return "r", err
}

// TestHandWrittenDraftReadAsTheLayerSyncs: a draft written by hand into
// skills/_drafts/ outside any work tree is inspected, hashed and promoted
// without what the workspace's skills/.gitignore names, as a proposal of
// the same folder copies it and as the sync of the layer would read the
// skill once promoted there. Judged by its own folder alone, the prod.env
// went into the promotion and its hash.
func TestHandWrittenDraftReadAsTheLayerSyncs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := t.TempDir()
	l := workspace.New(t.TempDir(), "")
	env := hostenv.New(home, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"})
	d := NewFolder(l, 1024).WithEnv(env)
	skilltest.WriteFile(t, filepath.Join(l.SkillsDir(), ".gitignore"), "*.env\n")
	skilltest.Skill(t, l.DraftsDir(), "mine", "Mine.", map[string]string{"prod.env": "API_KEY=sk-live-456\n", "notes.md": "n\n"})
	clean := skilltest.Skill(t, t.TempDir(), "mine", "Mine.", map[string]string{"notes.md": "n\n"})

	dr, err := d.Inspect(ctx, "mine")
	if err != nil {
		t.Fatal(err)
	}
	want, err := (&Folder{}).dirHash(ctx, clean)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range dr.Files {
		files = append(files, f.Path)
	}
	if !slices.Equal(files, []string{"SKILL.md", "notes.md"}) || !slices.Equal(dr.Ignored.Names, []string{"prod.env"}) || dr.Hash != want {
		t.Errorf("inspected: files %q, ignored %+v, hash %s; want SKILL.md and notes.md, prod.env ignored, hash %s", files, dr.Ignored, dr.Hash, want)
	}
	fsys, err := dr.FS()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Stat(fsys, "prod.env"); !os.IsNotExist(err) {
		t.Errorf("the draft's FS, which a promotion sends, serves prod.env: %v", err)
	}

	// A skill of the layer is hashed as the sync of the layer hashes it
	// (the copy a promotion archives is compared by it).
	local := skilltest.Skill(t, l.SkillsDir(), "local", "Mine.", map[string]string{"prod.env": "k\n", "notes.md": "n\n"})
	cleanLocal := skilltest.Skill(t, t.TempDir(), "local", "Mine.", map[string]string{"notes.md": "n\n"})
	got, err := d.dirHash(ctx, local)
	if err != nil {
		t.Fatal(err)
	}
	if wantLocal, _ := (&Folder{}).dirHash(ctx, cleanLocal); got != wantLocal {
		t.Errorf("hash of the layer's skill %s, want %s: without prod.env", got, wantLocal)
	}
}
