package materialize

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// sameFolderIn finds the record's folder that is the same directory under
// a name differing only in case (as a case-folding file system shows it;
// here a link stands in for that second name), and nothing else.
func TestSameFolderIn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, d := range []string{"Foo", "Bar", "other"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("Foo", filepath.Join(dir, "foo")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("other", filepath.Join(dir, "bar")); err != nil {
		t.Fatal(err)
	}
	m := map[string]string{"Foo": "skill Foo", "Bar": "skill Bar", "other": "skill other"}
	if got, ok := sameFolderIn(dir, "foo", m); !ok || got != "skill Foo" {
		t.Errorf("foo: %q %v, want the record's Foo", got, ok)
	}
	if got, ok := sameFolderIn(dir, "bar", m); ok {
		t.Errorf("bar (another directory, same name but for case): %q", got)
	}
	if got, ok := sameFolderIn(dir, "Foo", m); ok {
		t.Errorf("Foo itself: %q", got)
	}
	if got, ok := sameFolderIn(dir, "missing", m); ok {
		t.Errorf("missing: %q", got)
	}
}

// In symlink mode a skill with no directory of its own is copied: its
// build reads staging for the first time after the link of the skill
// before it was staged there, and must not take that link for a
// leftover of an earlier run.
func TestAStagedLinkOutlivesTheFirstLookAtStaging(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	linkTo := t.TempDir()
	skills := []TargetSkill{{Skill: mkSkill("a", v1), Dir: linkTo}, {Skill: mkSkill("b", v1)}}
	rep, err := SyncTarget(context.Background(), Target{Dir: dir, Mode: Symlink, Skills: skills})
	if err != nil || len(rep.Errors) > 0 {
		t.Fatalf("SyncTarget = %+v, %v", rep, err)
	}
	if got, err := os.Readlink(filepath.Join(dir, "a")); err != nil || got != linkTo {
		t.Errorf("a: link %q, %v", got, err)
	}
	if got := readFile(t, filepath.Join(dir, "b", "SKILL.md")); got != v1["SKILL.md"] {
		t.Errorf("b: SKILL.md holds %q", got)
	}
}
