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

// TestTargetLookedAtAgainAfterTheWait: a folder on the way to the target
// swapped for a link while the sync waited for another to finish with
// the target is refused once the lock is had (ErrTargetLinked), as it is
// before the wait: nothing is written, there or where the link leads.
func TestTargetLookedAtAgainAfterTheWait(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows resolves the target by path (docs/platforms.md)")
	}
	t.Parallel()
	ctx := context.Background()
	ws, outside := t.TempDir(), t.TempDir()
	parent := filepath.Join(ws, ".claude")
	dir := filepath.Join(parent, "skills")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(outside, "skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	other, err := flock.AcquireDir(ctx, dir, targetLock, 0)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		if err := os.Rename(parent, parent+".moved"); err != nil {
			t.Error(err)
		}
		if err := os.Symlink(outside, parent); err != nil {
			t.Error(err)
		}
		other.Close()
	}()
	alpha := map[string]string{"SKILL.md": "---\nname: alpha\ndescription: A.\n---\n"}
	_, err = SyncTarget(ctx, Target{Dir: dir, Skills: []TargetSkill{{Skill: mkSkill("alpha", alpha)}}, Workspace: ws, Root: ws, Wait: 10 * time.Second})
	if !errors.Is(err, ErrTargetLinked) {
		t.Errorf("SyncTarget = %v, want ErrTargetLinked", err)
	}
	for _, d := range []string{filepath.Join(outside, "skills"), filepath.Join(parent+".moved", "skills")} {
		if entries, _ := os.ReadDir(d); len(entries) != 0 {
			t.Errorf("%s was written: %v", d, entries)
		}
	}
}
