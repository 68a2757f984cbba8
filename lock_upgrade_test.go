package skillsync

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/lock"
	"github.com/skillsync/skillsync/workspace"
)

// firstKindHash stands for alpha's hash in a version-1 lock.
var firstKindHash = strings.Repeat("ab", 32)

// writeFirstKindLock turns the workspace's lock into version 1, with a
// hash of the first kind for alpha, and returns its path.
func writeFirstKindLock(t *testing.T, ws string) string {
	t.Helper()
	name := filepath.Join(ws, workspace.LockName)
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var old map[string]any
	if err := json.Unmarshal(raw, &old); err != nil {
		t.Fatal(err)
	}
	old["version"] = 1
	old["sources"].(map[string]any)["team"].(map[string]any)["skills"] = map[string]any{"alpha": firstKindHash}
	raw, _ = json.Marshal(old)
	if err := os.WriteFile(name, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// firstKindWorkspace syncs a workspace of alpha, keeps the version-2 lock
// that sync wrote, and turns the lock on disk into version 1
// (writeFirstKindLock, whose path it returns).
func firstKindWorkspace(t *testing.T) (up *gittest.Repo, e *Engine, ws string, fresh *lock.File, name string) {
	t.Helper()
	up = reuseUp(t)
	e, ws = newWorkspace(t, reuseConfig(up))
	mustSync(t, e, SyncOptions{})
	fresh = readLock(t, ws)
	if fresh.Version != lock.Version || fresh.Legacy() {
		t.Fatalf("a sync wrote lock version %d", fresh.Version)
	}
	return up, e, ws, fresh, writeFirstKindLock(t, ws)
}

// A skillsync.lock of version 1 holds skill hashes of the first kind,
// which no skill of today hashes to. sync --frozen refuses it, naming the
// file and the fix; verify does not call every skill modified; a sync
// writes version 2 with today's hashes and rewrites no cached file; and
// --frozen then passes.
func TestLockOfVersionOneIsRewrittenNotFrozen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, e, ws, fresh, name := firstKindWorkspace(t)

	_, err := e.Sync(ctx, SyncOptions{Frozen: true})
	if !IsFrozen(err) || !strings.Contains(err.Error(), "version 1") || !strings.Contains(err.Error(), "without --frozen") || strings.Contains(err.Error(), "skillsync update") || !strings.Contains(err.Error(), name) {
		t.Errorf("sync --frozen with a version-1 lock: %v", err)
	}
	if diffs, err := e.Verify(ctx); err != nil || len(diffs) > 0 {
		t.Errorf("verify against a version-1 lock: %v %v", diffs, err)
	}

	r := mustSync(t, e, SyncOptions{})
	if r.Files.Written != 0 {
		t.Errorf("the sync that rewrote the lock wrote %d cached files", r.Files.Written)
	}
	got := readLock(t, ws)
	if got.Version != lock.Version || !got.Same(fresh) {
		t.Errorf("lock after the sync: %+v, want %+v", got, fresh)
	}
	if _, err := e.Sync(ctx, SyncOptions{Frozen: true}); err != nil {
		t.Errorf("sync --frozen with the rewritten lock: %v", err)
	}
}

// A source the sync cannot bring keeps what a version-1 lock said of it,
// hashes of the first kind: the lock stays version 1, so --frozen and
// verify do not compare them, until a sync that brings every source
// writes version 2. (A review's case: a fresh checkout whose first sync
// after the upgrade could not reach its upstream.)
func TestLockOfVersionOneStaysWhileASourceFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up, e, ws, fresh, _ := firstKindWorkspace(t)

	if err := os.RemoveAll(e.layout.CacheDir()); err != nil {
		t.Fatal(err)
	}
	away := up.Dir + ".away"
	if err := os.Rename(up.Dir, away); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Sync(ctx, SyncOptions{}); err == nil {
		t.Error("a sync with its only source gone succeeded")
	}
	got := readLock(t, ws)
	if !got.Legacy() || got.Sources["team"].Skills["alpha"] != firstKindHash {
		t.Errorf("after the failed sync: lock version %d, alpha %s; want version 1 as it was", got.Version, got.Sources["team"].Skills["alpha"])
	}
	if _, err := e.Sync(ctx, SyncOptions{Frozen: true}); !IsFrozen(err) || !strings.Contains(err.Error(), "version 1") {
		t.Errorf("sync --frozen with the kept version-1 lock: %v", err)
	}

	if err := os.Rename(away, up.Dir); err != nil {
		t.Fatal(err)
	}
	mustSync(t, e, SyncOptions{})
	if got := readLock(t, ws); got.Legacy() || !got.Same(fresh) {
		t.Errorf("after a sync that brought every source: %+v, want %+v", got, fresh)
	}
	if _, err := e.Sync(ctx, SyncOptions{Frozen: true}); err != nil {
		t.Errorf("sync --frozen afterwards: %v", err)
	}
}
