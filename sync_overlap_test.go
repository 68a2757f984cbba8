package skillsync

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
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

// TestSyncFetchesWhileItWaitsForTheCache: a sync whose sources the lock
// does not pin starts their fetches before it takes the cache's lock, so
// a sync that waits for another one has its sources fetched meanwhile,
// and still takes the cache's records for what did not change.
func TestSyncFetchesWhileItWaitsForTheCache(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/alpha", "Alpha.")
	up.Commit("alpha")
	e, ws := newWorkspace(t, "repositories:\n  - name: team\n    git: "+up.URL()+"\n")
	mustSync(t, e, SyncOptions{})
	up.Skill("skills/beta", "Beta.")
	next := up.Commit("beta")

	ctx := context.Background()
	held, err := materialize.OpenCache(ctx, e.layout.CacheDir(), 0, SyncOptions{}.Check())
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		r   *SyncReport
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := e.Sync(ctx, SyncOptions{Wait: time.Minute})
		done <- result{r, err}
	}()
	stores, _ := filepath.Glob(filepath.Join(ws, ".git-store", "*"))
	fetched := func() bool {
		for _, store := range stores {
			if exec.Command("git", "--git-dir", store, "cat-file", "-e", next+"^{commit}").Run() == nil {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(30 * time.Second); !fetched(); {
		select {
		case res := <-done:
			held.Close()
			t.Fatalf("the sync ended (%v) while another held the cache", res.err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			held.Close()
			<-done
			t.Fatalf("the store %v did not fetch %s while the sync waited for the cache", stores, next)
		}
	}
	if err := held.Close(); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.err != nil || !slices.Equal(res.r.Skills.Added, []string{"team/beta"}) || res.r.Files.Written != 1 {
		t.Fatalf("sync after the wait: %v, added %v, files %+v", res.err, res.r.Skills.Added, res.r.Files)
	}
}

// TestSyncRefusedAtTheCacheStopsItsFetches: the fetches a sync starts
// before it takes the cache's lock are stopped when it cannot take it,
// rather than waited for.
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
