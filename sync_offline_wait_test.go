package skillsync

import (
	"bytes"
	"context"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/materialize"
)

// TestOfflineSyncThatWaitedReadsTheCopyAsItIsThen: an offline sync
// materializes each source at the revision its local copy holds; one that
// waited for the cache takes the revision the copy holds once it has the
// cache (what the sync it waited for fetched), not the one before.
func TestOfflineSyncThatWaitedReadsTheCopyAsItIsThen(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/alpha", "Alpha.")
	up.Commit("alpha")
	e, _ := newWorkspace(t, "repositories:\n  - name: team\n    git: "+up.URL()+"\n")
	mustSync(t, e, SyncOptions{})
	up.Skill("skills/beta", "Beta.")
	next := up.Commit("beta")

	ctx := context.Background()
	held, err := materialize.OpenCache(ctx, e.layout.CacheDir(), 0, SyncOptions{}.Check())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan syncResult, 1)
	go func() {
		pprof.Do(ctx, pprof.Labels("waiter", e.layout.CacheDir()), func(ctx context.Context) {
			r, err := reload(t, e.cfg.File).Sync(ctx, SyncOptions{Offline: true, Wait: time.Minute})
			done <- syncResult{r, err}
		})
	}()
	// The offline sync waits for the cache...
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if waitingForTheCache(e.layout.CacheDir()) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the offline sync did not wait for the cache")
		}
	}
	// ... while the sync holding it brings the new revision.
	if _, err := e.Fetch(ctx, nil, 0); err != nil {
		t.Fatal(err)
	}
	held.Close()
	res := <-done
	if res.err != nil || len(res.r.Sources) != 1 || res.r.Sources[0].Revision != next {
		t.Fatalf("offline sync after the wait: %v, sources %+v; want team at %s", res.err, res.r.Sources, next)
	}
}

// waitingForTheCache reports whether the goroutine labelled waiter=dir
// waits in materialize.OpenCache.
func waitingForTheCache(dir string) bool {
	var buf bytes.Buffer
	pprof.Lookup("goroutine").WriteTo(&buf, 1)
	for _, rec := range strings.Split(buf.String(), "\n\n") {
		if strings.Contains(rec, `"waiter":"`+dir+`"`) && strings.Contains(rec, "materialize.OpenCache") {
			return true
		}
	}
	return false
}
