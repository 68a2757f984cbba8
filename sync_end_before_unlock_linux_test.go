package skillsync

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/flock"
	"github.com/skillsync/skillsync/workspace"
)

// TestSyncWhoseCacheFailsToOpenEndsItsFetchesBeforeTheLockGoes: the
// fetches start once the cache's lock is held; a cache that then fails to
// open (its staging cannot be made) must have them ended before its lock
// is let go, as every other early stop does.
func TestSyncWhoseCacheFailsToOpenEndsItsFetchesBeforeTheLockGoes(t *testing.T) {
	t.Parallel()
	server := silentServer(t)
	dir := t.TempDir()
	// The fetch reads its password from a pipe: it stays in that read,
	// whatever its context says, until the test lets it go.
	pipe := filepath.Join(dir, "password")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Skip(err)
	}
	e, ws := newWorkspace(t, "repositories:\n  - name: slow\n    git: "+server.URL+"/team.git\n    timeout: 10m\n    auth:\n      password_file: "+pipe+"\n")
	cache := filepath.Join(ws, workspace.CacheName)
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	// A staging folder that cannot be made: the cache fails to open after
	// its lock is taken and the fetches have started.
	staging := filepath.Join(cache, ".staging")
	if err := os.WriteFile(staging, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("chattr", "+i", staging).CombinedOutput(); err != nil {
		t.Skipf("cannot make a file immutable here: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("chattr", "-i", staging).Run() })

	done := make(chan error, 1)
	go func() {
		_, err := e.Sync(context.Background(), SyncOptions{})
		done <- err
	}()
	var writer *os.File
	for deadline := time.Now().Add(30 * time.Second); writer == nil; time.Sleep(5 * time.Millisecond) {
		if w, err := os.OpenFile(pipe, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			writer = w // the fetch is reading the password
		} else if time.Now().After(deadline) {
			t.Fatal("the fetch did not start")
		}
	}
	l, err := flock.Acquire(context.Background(), filepath.Join(cache, ".lock"), 2*time.Second)
	if err == nil {
		l.Close()
		t.Error("the cache's lock was let go while the sync's fetch still ran")
	} else if !errors.Is(err, flock.ErrLocked) {
		t.Errorf("lock: %v", err)
	}
	writer.Close()
	// Every later read of the password (an error's explanation reads it
	// again) is given an empty one.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			if w, err := os.OpenFile(pipe, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		}
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("the sync succeeded with a cache that cannot open")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the sync did not end")
	}
}
