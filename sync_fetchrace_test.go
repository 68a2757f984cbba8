package skillsync

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/lock"
)

// TestWaitingSyncsFetchDoesNotChangeWhatTheRunningSyncReads: a sync
// that waits for the cache fetches nothing meanwhile; the sync that holds
// the cache reads each source at the revision its own fetch gave, which
// it records in the cache and the lock.
func TestWaitingSyncsFetchDoesNotChangeWhatTheRunningSyncReads(t *testing.T) {
	t.Parallel()
	held := startHeldSync(t)
	b := reload(t, held.e.cfg.File)
	held.up.Skill("skills/beta", "Beta.")
	second := held.up.Commit("beta")

	// Sync b waits for the cache, and gives up.
	ctx, stop := context.WithCancel(context.Background())
	bdone := make(chan error, 1)
	go func() {
		_, err := b.Sync(ctx, SyncOptions{Wait: time.Minute})
		bdone <- err
	}()
	// (A sync that fetches only once it holds the cache never moves it;
	// one that fetched while it waited did within a tenth of that.)
	for deadline := time.Now().Add(2 * time.Second); held.ref() != second && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	if err := <-bdone; err == nil {
		t.Fatal("the waiting sync took the cache")
	}
	if got := held.ref(); got != held.first {
		t.Errorf("the waiting sync moved the git store to %s", got[:min(8, len(got))])
	}
	held.finish(t)
}

// TestSyncReadsTheRevisionItsFetchGaveWhenAnotherWorkspaceFetches: two
// workspaces share a git store; a sync of one that fetched its source
// reads that revision's skills, and records that revision, though a sync
// of the other moved the store's ref on before it read them.
func TestSyncReadsTheRevisionItsFetchGaveWhenAnotherWorkspaceFetches(t *testing.T) {
	t.Parallel()
	held := startHeldSync(t)
	_, other := workspaceConfig(t, "repositories:\n  - name: team\n    git: "+held.up.URL()+"\n")
	b := NewEngine(loadConfig(t, filepath.Join(other, config.FileName)), WithGitStore(held.store))
	held.up.Skill("skills/beta", "Beta.")
	second := held.up.Commit("beta")
	// The other workspace's sync moves the shared store to second.
	if r := mustSync(t, b, SyncOptions{}); !slices.Equal(r.Skills.Added, []string{"team/alpha", "team/beta"}) || held.ref() != second {
		held.release()
		t.Fatalf("the other workspace's sync added %v, the store's ref at %s", r.Skills.Added, held.ref())
	}
	held.finish(t)
}

// heldSync is a sync of a workspace whose sources are slow, a remote that
// answers (with nothing) only once released, and team, whose fetch has
// brought first into the git store by the time startHeldSync returns:
// the sync holds the cache, waiting on slow before it reads team.
type heldSync struct {
	e       *Engine
	up      *gittest.Repo
	first   string
	store   string
	release func()
	done    chan syncResult
}

type syncResult struct {
	r   *SyncReport
	err error
}

func startHeldSync(t *testing.T) *heldSync {
	t.Helper()
	released := make(chan struct{})
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-released:
		case <-r.Context().Done():
		}
		http.Error(w, "gone", http.StatusNotFound)
	}))
	t.Cleanup(func() { server.CloseClientConnections(); server.Close() })
	h := &heldSync{up: gittest.NewRepo(t, "main"), done: make(chan syncResult, 1)}
	h.release = sync.OnceFunc(func() { close(released) })
	t.Cleanup(h.release)
	h.up.Skill("skills/alpha", "Alpha.")
	h.first = h.up.Commit("alpha")
	var ws string
	h.e, ws = newWorkspace(t, "repositories:\n  - name: slow\n    git: "+server.URL+"/slow.git\n  - name: team\n    git: "+h.up.URL()+"\n")
	h.store = filepath.Join(ws, ".git-store")
	go func() {
		r, err := h.e.Sync(context.Background(), SyncOptions{})
		h.done <- syncResult{r, err}
	}()
	for deadline := time.Now().Add(30 * time.Second); h.ref() != h.first; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			h.release()
			<-h.done
			t.Fatal("team was not fetched")
		}
	}
	return h
}

// ref is the commit the git store holds for team, "" for none.
func (h *heldSync) ref() string {
	stores, _ := filepath.Glob(filepath.Join(h.store, "*"))
	for _, s := range stores {
		if out, err := exec.Command("git", "--git-dir", s, "rev-parse", "-q", "--verify", "refs/skillsync/default").Output(); err == nil {
			return strings.TrimSpace(string(out))
		}
	}
	return ""
}

// finish lets slow fail and checks that the sync read and recorded team
// at first: alpha alone, in its report and in its lock.
func (h *heldSync) finish(t *testing.T) {
	t.Helper()
	h.release()
	res := <-h.done
	var team *SourceReport
	for i := range res.r.Sources {
		if res.r.Sources[i].Source == "team" {
			team = &res.r.Sources[i]
		}
	}
	if team == nil || team.Revision != h.first || !slices.Equal(res.r.Skills.Added, []string{"team/alpha"}) {
		t.Fatalf("team: %+v (sync: %v), added %v; want team/alpha alone, at %s", team, res.err, res.r.Skills.Added, h.first[:8])
	}
	locked, _, err := lock.Read(h.e.layout.LockFile(), h.e.kinds)
	if err != nil {
		t.Fatal(err)
	}
	if s := locked.Sources["team"]; s == nil || s.Revision != h.first || len(s.Skills) != 1 {
		t.Errorf("skillsync.lock has team as %+v; want alpha alone at %s", s, h.first[:8])
	}
}
