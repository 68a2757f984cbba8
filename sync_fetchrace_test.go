package skillsync

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/lock"
)

// TestWaitingSyncsFetchDoesNotChangeWhatTheRunningSyncReads: a sync
// that waits for the cache fetches meanwhile; the sync that holds the
// cache must still read each source at the revision its own fetch gave,
// which it records in the cache and the lock.
func TestWaitingSyncsFetchDoesNotChangeWhatTheRunningSyncReads(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // answers only once released, then with nothing
		case <-release:
		case <-r.Context().Done():
		}
		http.Error(w, "gone", http.StatusNotFound)
	}))
	t.Cleanup(func() { server.CloseClientConnections(); server.Close() })
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/alpha", "Alpha.")
	first := up.Commit("alpha")
	cfg := "repositories:\n  - name: slow\n    git: " + server.URL + "/slow.git\n  - name: team\n    git: " + up.URL() + "\n"
	a, ws := newWorkspace(t, cfg)
	b := reload(t, a.cfg.File)
	ctx := context.Background()

	// Sync a holds the cache; it syncs slow first, waiting for its fetch,
	// while team's fetch has brought first.
	type result struct {
		r   *SyncReport
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := a.Sync(ctx, SyncOptions{})
		done <- result{r, err}
	}()
	ref := func() string {
		stores, _ := filepath.Glob(filepath.Join(ws, ".git-store", "*"))
		for _, s := range stores {
			if out, err := exec.Command("git", "--git-dir", s, "rev-parse", "-q", "--verify", "refs/skillsync/default").Output(); err == nil {
				return strings.TrimSpace(string(out))
			}
		}
		return ""
	}
	for deadline := time.Now().Add(30 * time.Second); ref() != first; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("team was not fetched")
		}
	}
	up.Skill("skills/beta", "Beta.")
	second := up.Commit("beta")

	// Sync b waits for the cache, fetching meanwhile, and gives up.
	bctx, stop := context.WithCancel(ctx)
	bdone := make(chan error, 1)
	go func() {
		_, err := b.Sync(bctx, SyncOptions{Wait: time.Minute})
		bdone <- err
	}()
	// (A sync that fetches only once it holds the cache never moves it;
	// one that fetched while it waited did within a tenth of that.)
	for deadline := time.Now().Add(2 * time.Second); ref() != second && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	if err := <-bdone; err == nil {
		t.Fatal("the waiting sync took the cache")
	}

	close(release) // slow fails; a goes on to team
	res := <-done
	var team *SourceReport
	for i := range res.r.Sources {
		if res.r.Sources[i].Source == "team" {
			team = &res.r.Sources[i]
		}
	}
	if team == nil || team.Revision != first {
		t.Fatalf("team: %+v (sync: %v), want revision %s", team, res.err, first)
	}
	if slices.Contains(res.r.Skills.Added, "team/beta") {
		t.Errorf("sync at revision %s added team/beta, of %s, which the waiting sync fetched: added %v", first[:8], second[:8], res.r.Skills.Added)
	}
	locked, _, err := lock.Read(a.layout.LockFile(), a.kinds)
	if err != nil {
		t.Fatal(err)
	}
	if s := locked.Sources["team"]; s != nil && s.Revision == first {
		if _, ok := s.Skills["beta"]; ok {
			t.Errorf("skillsync.lock pins team at %s, which has no beta, and locks beta", first[:8])
		}
	}
}

// TestSyncReadsTheRevisionItsFetchGaveWhenAnotherWorkspaceFetches: two
// workspaces share a git store; a sync of one that fetched its source
// reads that revision's skills, and records that revision, though a sync
// of the other moved the store's ref on before it read them.
func TestSyncReadsTheRevisionItsFetchGaveWhenAnotherWorkspaceFetches(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // answers only once released, then with nothing
		case <-release:
		case <-r.Context().Done():
		}
		http.Error(w, "gone", http.StatusNotFound)
	}))
	t.Cleanup(func() { server.CloseClientConnections(); server.Close() })
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/alpha", "Alpha.")
	first := up.Commit("alpha")
	a, ws := newWorkspace(t, "repositories:\n  - name: slow\n    git: "+server.URL+"/slow.git\n  - name: team\n    git: "+up.URL()+"\n")
	store := filepath.Join(ws, ".git-store")
	_, other := workspaceConfig(t, "repositories:\n  - name: team\n    git: "+up.URL()+"\n")
	b := NewEngine(loadConfig(t, filepath.Join(other, config.FileName)), WithGitStore(store))
	ctx := context.Background()

	// a syncs slow first, waiting for it, while team's fetch brings first.
	type result struct {
		r   *SyncReport
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := a.Sync(ctx, SyncOptions{})
		done <- result{r, err}
	}()
	ref := func() string {
		stores, _ := filepath.Glob(filepath.Join(store, "*"))
		for _, s := range stores {
			if out, err := exec.Command("git", "--git-dir", s, "rev-parse", "-q", "--verify", "refs/skillsync/default").Output(); err == nil {
				return strings.TrimSpace(string(out))
			}
		}
		return ""
	}
	for deadline := time.Now().Add(30 * time.Second); ref() != first; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			close(release)
			<-done
			t.Fatal("team was not fetched")
		}
	}
	up.Skill("skills/beta", "Beta.")
	second := up.Commit("beta")
	// The other workspace's sync moves the shared store to second.
	if r := mustSync(t, b, SyncOptions{}); !slices.Equal(r.Skills.Added, []string{"team/alpha", "team/beta"}) || ref() != second {
		close(release)
		<-done
		t.Fatalf("the other workspace's sync added %v, the store's ref at %s", r.Skills.Added, ref())
	}

	close(release) // slow fails; a goes on to team
	res := <-done
	var team *SourceReport
	for i := range res.r.Sources {
		if res.r.Sources[i].Source == "team" {
			team = &res.r.Sources[i]
		}
	}
	if team == nil || team.Revision != first || !slices.Equal(res.r.Skills.Added, []string{"team/alpha"}) {
		t.Fatalf("team: %+v (sync: %v), added %v; want team/alpha alone, at %s", team, res.err, res.r.Skills.Added, first[:8])
	}
	locked, _, err := lock.Read(a.layout.LockFile(), a.kinds)
	if err != nil {
		t.Fatal(err)
	}
	if s := locked.Sources["team"]; s == nil || s.Revision != first || len(s.Skills) != 1 {
		t.Errorf("skillsync.lock has team as %+v; want alpha alone at %s", s, first[:8])
	}
}
