package materialize

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/flock"
)

// TestLinkOnTheWayFromRoot: a folder between the root and the target
// swapped for a link after the caller's check (a hostile clone's
// .claude -> ~/.ssh, or any folder a dotfiles manager links) is refused
// by SyncTarget and GiveUpTarget themselves (ErrTargetLinked, naming the
// link): nothing is made, written or removed where the link leads, and
// no folder is made there on the way.
func TestLinkOnTheWayFromRoot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, deep := range []bool{false, true} {
		ws, outside := t.TempDir(), t.TempDir()
		link := filepath.Join(ws, ".claude")
		if deep {
			link = filepath.Join(ws, "a", ".claude")
			if err := os.Mkdir(filepath.Join(ws, "a"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(outside, link); err != nil {
			t.Skip("no symbolic links here:", err)
		}
		dir := filepath.Join(link, "skills", "deeper")
		skills := []TargetSkill{{Skill: mkSkill("alpha", map[string]string{"SKILL.md": "---\nname: alpha\ndescription: A.\n---\n"})}}
		_, err := SyncTarget(ctx, Target{Dir: dir, Mode: Copy, Skills: skills, Workspace: ws, Root: ws})
		if !errors.Is(err, ErrTargetLinked) || !IsRefused(err) || !strings.Contains(err.Error(), link+" is a symbolic link") {
			t.Errorf("SyncTarget below a link: %v, want ErrTargetLinked naming %s", err, link)
		}
		if entries, err := os.ReadDir(outside); err != nil || len(entries) != 0 {
			t.Errorf("made or written through the link: %v %v", entries, err)
		}
		// A record where the link leads, of a copy this workspace made.
		there := filepath.Join(outside, "skills", "deeper")
		if _, err := SyncTarget(ctx, Target{Dir: there, Mode: Copy, Skills: skills, Workspace: ws}); err != nil {
			t.Fatal(err)
		}
		copied := filepath.Join(there, "alpha", "SKILL.md")
		if _, done, err := GiveUpTargetBelow(ctx, ws, dir, ws, 0); done || !errors.Is(err, ErrTargetLinked) {
			t.Errorf("GiveUpTargetBelow below a link: %v %v, want ErrTargetLinked", done, err)
		}
		if _, err := os.Stat(copied); err != nil {
			t.Errorf("removed through the link: %v", err)
		}
		// Through real folders, the missing ones are made.
		real := filepath.Join(ws, "b", "c", "skills")
		if _, err := SyncTarget(ctx, Target{Dir: real, Mode: Copy, Skills: skills, Workspace: ws, Root: ws}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(real, "alpha", "SKILL.md")); err != nil {
			t.Error(err)
		}
	}
}

// TestLinkSwappedWhileWaitingForTheLock: a folder on the way swapped for
// a link while the sync waits for another to finish with the target is
// met when it holds the lock, and refused, nothing written where the
// link leads.
func TestLinkSwappedWhileWaitingForTheLock(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the folder of a held lock cannot be renamed on Windows")
	}
	t.Parallel()
	ctx := context.Background()
	ws, outside := t.TempDir(), t.TempDir()
	dir := filepath.Join(ws, ".claude", "skills")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(outside, "skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	held, err := flock.AcquireDir(ctx, dir, targetLock, 0)
	if err != nil {
		t.Fatal(err)
	}
	skills := []TargetSkill{{Skill: mkSkill("alpha", map[string]string{"SKILL.md": "---\nname: alpha\ndescription: A.\n---\n"})}}
	done := make(chan error, 1)
	go func() {
		_, err := SyncTarget(ctx, Target{Dir: dir, Mode: Copy, Skills: skills, Workspace: ws, Root: ws, Wait: 20 * time.Second})
		done <- err
	}()
	time.Sleep(300 * time.Millisecond) // the sync is waiting for the lock
	if err := os.Rename(filepath.Join(ws, ".claude"), filepath.Join(ws, ".claude-old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, ".claude")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	held.Close()
	if err := <-done; !errors.Is(err, ErrTargetLinked) {
		t.Errorf("SyncTarget after a swap while it waited: %v, want ErrTargetLinked", err)
	}
	if entries, err := os.ReadDir(filepath.Join(outside, "skills")); err != nil || len(entries) != 0 {
		t.Errorf("written through the link: %v %v", entries, err)
	}
}
