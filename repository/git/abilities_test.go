package git_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/repository"
	dirsource "github.com/skillsync/skillsync/repository/dir"
)

// Sources read in place have nothing to fetch, and their revision is the
// one Sync gives, upstream as locally.
func TestAbilitiesFallBackForLocalSources(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "one"), 0o755); err != nil {
		t.Fatal(err)
	}
	skilltest.WriteFile(t, filepath.Join(dir, "one", "SKILL.md"), "---\nname: one\ndescription: One.\n---\n")
	ctx := context.Background()
	l := dirsource.NewLocal("local", dir, repository.Options{})
	if res, err := repository.Fetch(ctx, l); err != nil || res.Revision != "" || res.Updated || len(res.Warnings) != 0 {
		t.Errorf("Fetch of a local source = %+v, %v; want nothing done", res, err)
	}
	want, err := l.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(context.Context, repository.Repository) (repository.Revision, error){
		"Current": repository.Current, "Upstream": repository.Upstream,
	} {
		if got, err := f(ctx, l); err != nil || got != want {
			t.Errorf("%s of a local source = %s, %v; want %s", name, got, err, want)
		}
	}
	// A git source is fetched for real.
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/one", "First.")
	head := up.Commit("one")
	g := newGit(t, up.URL(), "")
	if res, err := repository.Fetch(ctx, g); err != nil || string(res.Revision) != head {
		t.Errorf("Fetch of a git source = %+v, %v", res, err)
	}
}
