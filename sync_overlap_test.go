package skillsync

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/workspace"
)

// TestSyncReportsFileRecordsItCannotUse: file records found damaged while
// the sync runs (read ahead of a changed source, or at its discovery) are
// a warning of the sync's report, as those found when the cache opened
// are; the source's files are hashed again and the sync goes on.
func TestSyncReportsFileRecordsItCannotUse(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/alpha", "Alpha.")
	up.Skill("skills/beta", "Beta.")
	up.Commit("two skills")
	e, ws := newWorkspace(t, "repositories:\n  - name: team\n    git: "+up.URL()+"\n")
	mustSync(t, e, SyncOptions{})
	records, err := filepath.Glob(filepath.Join(ws, workspace.CacheName, ".records", "*.files"))
	if err != nil || len(records) != 1 {
		t.Fatalf("file records: %v %v", records, err)
	}
	if err := os.WriteFile(records[0], []byte("damaged"), 0o644); err != nil {
		t.Fatal(err)
	}

	up.Write("skills/alpha/notes.md", "new", 0o644)
	up.Commit("alpha grows")
	r := mustSync(t, e, SyncOptions{})
	if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "file records of source team cannot be used") }) {
		t.Errorf("warnings %q; want the damaged file records named", r.Warnings)
	}
	if !slices.Equal(r.Skills.Updated, []string{"team/alpha"}) {
		t.Errorf("updated %v, want team/alpha", r.Skills.Updated)
	}
	if diffs, err := e.Verify(context.Background()); err != nil || len(diffs) > 0 {
		t.Errorf("verify: %v %v", diffs, err)
	}
}

// TestAFirstSyncWarnsOfNothing: a source the cache never held has no file
// records, and its first sync says nothing of them. It said their record
// file was gone, on every first run of skillsync sync.
func TestAFirstSyncWarnsOfNothing(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/alpha", "Alpha.")
	up.Commit("one skill")
	e, _ := newWorkspace(t, "repositories:\n  - name: team\n    git: "+up.URL()+"\n")
	if r := mustSync(t, e, SyncOptions{}); len(r.Warnings) > 0 || len(r.Skills.Added) != 1 {
		t.Errorf("first sync: added %v, warnings %q", r.Skills.Added, r.Warnings)
	}
}

// TestSyncStopsItsFetchesWhenTheUsageCannotBeRead: the usage is read
// while the sources fetch; a usage file that stops the sync stops the
// fetches too, rather than waiting for a server that does not answer.
func TestSyncStopsItsFetchesWhenTheUsageCannotBeRead(t *testing.T) {
	t.Parallel()
	server := silentServer(t)
	e, ws := newWorkspace(t, "repositories:\n  - name: slow\n    git: "+server.URL+"/team.git\n    timeout: 10m\n")
	// A usage file that cannot be used at all: a directory.
	if err := os.MkdirAll(filepath.Join(ws, "skills", ".usage.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := e.Sync(context.Background(), SyncOptions{})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), ".usage.json") {
			t.Errorf("sync = %v; want the usage file named", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the sync waited for a fetch after its usage file stopped it")
	}
}

// TestSyncRefusedAtTheCacheStopsItsFetches: a sync that cannot take the
// cache's lock ends at once, whatever its sources' remotes do: it starts
// their fetches only once it holds the lock.
func TestSyncRefusedAtTheCacheStopsItsFetches(t *testing.T) {
	t.Parallel()
	server := silentServer(t)
	e, _ := newWorkspace(t, "repositories:\n  - name: slow\n    git: "+server.URL+"/team.git\n    timeout: 10m\n")
	ctx := context.Background()
	held, err := materialize.OpenCache(ctx, e.layout.CacheDir(), 0, SyncOptions{}.Check())
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	done := make(chan error, 1)
	go func() {
		_, err := e.Sync(ctx, SyncOptions{Wait: 50 * time.Millisecond})
		done <- err
	}()
	select {
	case err := <-done:
		if !IsLocked(err) {
			t.Errorf("sync = %v; want the cache's lock held", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the sync refused at the cache waited for its fetch")
	}
}

// silentServer is a git remote over HTTP that never answers.
func silentServer(t *testing.T) *httptest.Server {
	t.Helper()
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	t.Cleanup(func() {
		// A sync still fetching holds its connection open: cut it, so
		// that Close does not wait for it.
		server.CloseClientConnections()
		server.Close()
	})
	return server
}
