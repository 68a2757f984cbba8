package materialize

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestRecordReadFromTheFolderHeld: a target's record is read, and a
// corrupt one set aside, in the folder the sync holds open, not through
// a folder on the way swapped for a link after the check. A record where
// the link leads that lists a skill of the name of the user's own folder
// in the target, with that folder's look-alike beside it, would have the
// sync take the user's folder for its own and remove it; a corrupt one
// there would be renamed.
func TestRecordReadFromTheFolderHeld(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows resolves the target by path (docs/platforms.md)")
	}
	t.Parallel()
	ctx := context.Background()
	alpha := map[string]string{"SKILL.md": "---\nname: alpha\ndescription: A.\n---\n"}
	mine := map[string]string{"SKILL.md": "---\nname: mine\ndescription: M.\n---\n"}
	for _, corrupt := range []bool{false, true} {
		ws, outside := t.TempDir(), t.TempDir()
		parent := filepath.Join(ws, ".claude")
		dir := filepath.Join(parent, "skills")
		if _, err := SyncTarget(ctx, Target{Dir: dir, Skills: []TargetSkill{{Skill: mkSkill("alpha", alpha)}}, Workspace: ws, Root: ws}); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(dir, "mine"), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, "mine", "SKILL.md"), mine["SKILL.md"])
		// Where the link will lead: a target of the same workspace whose
		// record lists mine, with mine as recorded.
		there := filepath.Join(outside, "skills")
		if _, err := SyncTarget(ctx, Target{Dir: there, Skills: []TargetSkill{{Skill: mkSkill("alpha", alpha)}, {Skill: mkSkill("mine", mine)}}, Workspace: ws}); err != nil {
			t.Fatal(err)
		}
		if corrupt {
			write(t, filepath.Join(there, RecordName), "not json")
		}
		swap := func() {
			if err := os.Rename(parent, parent+".moved"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, parent); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := SyncTarget(ctx, Target{Dir: dir, Skills: []TargetSkill{{Skill: mkSkill("alpha", alpha)}}, Workspace: ws, Root: ws, checked: swap})
		if err != nil || len(rep.Errors) > 0 {
			t.Errorf("corrupt %v: SyncTarget = %+v, %v", corrupt, rep, err)
		}
		held := filepath.Join(parent+".moved", "skills")
		if got := readFile(t, filepath.Join(held, "mine", "SKILL.md")); got != mine["SKILL.md"] {
			t.Errorf("corrupt %v: the user's own folder in the target holds %q", corrupt, got)
		}
		if corrupt {
			if got := readFile(t, filepath.Join(there, RecordName)); got != "not json" {
				t.Errorf("the corrupt record where the link leads holds %q", got)
			}
		}
	}
}
