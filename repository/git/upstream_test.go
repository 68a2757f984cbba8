package git_test

import (
	"context"
	"os"
	"testing"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/repository"
)

// Upstream lists the remote's refs and downloads nothing: the server sees
// no upload-pack request and the store is not touched.
func TestGitUpstreamListsOnly(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/one", "First.")
	first := up.Commit("one")
	up.Git("tag", "-a", "v1", "-m", "release 1")
	srv, url := up.ServeHTTP("r", "", "")
	ctx := context.Background()

	fetched := newGit(t, url, "main")
	fetch(t, fetched)
	packs := srv.UploadPacks.Load()
	up.Skill("skills/two", "Second.")
	second := up.Commit("two")
	for _, tt := range []struct{ ref, want string }{{"", second}, {"main", second}, {"v1", first}, {first, first}} {
		g := newGit(t, url, tt.ref)
		if got, err := g.Upstream(ctx); err != nil || string(got) != tt.want {
			t.Errorf("Upstream of ref %q = %s, %v; want %s", tt.ref, got, err, tt.want)
		}
		if _, err := os.Stat(g.StoreDir()); !os.IsNotExist(err) {
			t.Errorf("Upstream of ref %q made a store: %v", tt.ref, err)
		}
	}
	if got, err := repository.Upstream(ctx, fetched); err != nil || string(got) != second {
		t.Errorf("repository.Upstream = %s, %v; want %s", got, err, second)
	}
	if n := srv.UploadPacks.Load(); n != packs {
		t.Errorf("Upstream downloaded objects: %d upload-pack requests", n-packs)
	}
	if cur, err := repository.Current(ctx, fetched); err != nil || string(cur) != first {
		t.Errorf("the fetched store moved: Current = %s, %v", cur, err)
	}
}
