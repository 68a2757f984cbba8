package materialize

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// secondErr is a context whose Err is nil at its first call and
// context.Canceled from then on: a commit stopped once its staged files
// are flushed.
type secondErr struct {
	context.Context
	calls atomic.Int32
}

func (c *secondErr) Err() error {
	if c.calls.Add(1) > 1 {
		return context.Canceled
	}
	return nil
}

// A commit stopped after the flush of its staged files changed nothing
// live, so the marker it wrote for its swaps goes again: the next sync
// does not check every file for nothing.
func TestACommitStoppedBeforeItsSwapsLeavesNoMarker(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	syncOnce(t, root, "r1", mkSkill("a", v1))
	c := open(t, root)
	changed := map[string]string{"SKILL.md": v1["SKILL.md"], "scripts/run.sh": v1["scripts/run.sh"], "ref/notes.md": "notes v2"}
	if res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "r2", Skills: []Skill{mkSkill("a", changed)}}); len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	ctx := &secondErr{Context: context.Background()}
	if err := c.Commit(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("commit: %v, want it stopped", err)
	}
	if _, err := os.Lstat(filepath.Join(root, dirtyName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the marker is there after a commit that swapped nothing: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(root, "src", "a", "ref", "notes.md")); err != nil || string(got) != "notes v1" {
		t.Errorf("the live file: %q %v, want the old version", got, err)
	}
}
