package materialize

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/flock"
)

// TestTargetLockCoversTheFolderWritten: the folder a target sync writes
// into is the folder it locked, even when the target folder is swapped
// for another (moved aside, a new one made in its place) right after the
// lock was taken: another sync of that target must find the folder it
// would write locked, and none may write a folder the lock does not
// cover. Whether the lock had to be waited for or not.
func TestTargetLockCoversTheFolderWritten(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows resolves the target by path (docs/platforms.md)")
	}
	t.Parallel()
	ctx := context.Background()
	alpha := map[string]string{"SKILL.md": "---\nname: alpha\ndescription: A.\n---\n"}
	for _, wait := range []bool{false, true} {
		ws := t.TempDir()
		dir := filepath.Join(ws, ".claude", "skills")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if wait {
			// Another sync holds the target a moment: this one waits.
			other, err := flock.AcquireDir(ctx, dir, targetLock, 0)
			if err != nil {
				t.Fatal(err)
			}
			go func() { time.Sleep(100 * time.Millisecond); other.Close() }()
		}
		// What each folder's lock said as the sync was about to write.
		free := map[string]bool{}
		swapped := false
		swap := func() {
			if swapped {
				return
			}
			swapped = true
			if err := os.Rename(dir, dir+".old"); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		// Just before the sync writes: which folder does its lock cover?
		probe := func() {
			for _, d := range []string{dir, dir + ".old"} {
				l, err := flock.AcquireDir(ctx, d, targetLock, 0)
				if err == nil {
					l.Close()
				} else if !errors.Is(err, flock.ErrLocked) {
					t.Fatal(err)
				}
				free[d] = err == nil
			}
		}
		rep, err := SyncTarget(ctx, Target{Dir: dir, Skills: []TargetSkill{{Skill: mkSkill("alpha", alpha)}}, Workspace: ws, Root: ws, Wait: 10 * time.Second, locked: swap, checked: probe})
		if err != nil || len(rep.Errors) > 0 {
			t.Fatalf("wait %v: SyncTarget = %+v, %v", wait, rep, err)
		}
		for _, d := range []string{dir, dir + ".old"} {
			if _, err := os.Stat(filepath.Join(d, "alpha", "SKILL.md")); err == nil && free[d] {
				t.Errorf("wait %v: the sync wrote %s, which its lock did not cover", wait, d)
			}
		}
	}
}

// TestTargetLockGoesWhenTheSyncPanicsHoldingIt: a panic while a target
// sync holds the target's lock, before the sync has it in hand (here the
// test's hook, called as the lock is taken), lets the lock go as it
// passes: the daemon recovers from a job's panic and goes on, and a
// target locked until the collector closed the file stopped every later
// sync's.
func TestTargetLockGoesWhenTheSyncPanicsHoldingIt(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows resolves the target by path (docs/platforms.md)")
	}
	t.Parallel()
	ctx := context.Background()
	ws := t.TempDir()
	dir := filepath.Join(ws, ".claude", "skills")
	alpha := []TargetSkill{{Skill: mkSkill("alpha", map[string]string{"SKILL.md": "---\nname: alpha\ndescription: A.\n---\n"})}}
	func() {
		defer func() {
			if r := recover(); r != "held" {
				t.Fatalf("recovered %v, want the hook's panic", r)
			}
		}()
		SyncTarget(ctx, Target{Dir: dir, Skills: alpha, Workspace: ws, Root: ws, locked: func() { panic("held") }})
	}()
	lk, err := flock.AcquireDir(ctx, dir, targetLock, 0)
	if err != nil {
		t.Fatalf("the target's lock after the panic: %v, want it free", err)
	}
	lk.Close()
}
