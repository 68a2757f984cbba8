package materialize

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestTargetAfterASyncKilledBeforeItsRecord: a target sync killed once
// its entries are live and before its record is written leaves copies
// the record does not describe. The next sync takes them as skillsync's
// own, whatever it places: it neither moves one aside as the user's edit
// nor reports a new skill's folder as a conflict. A copy the user edited
// after the kill is still kept aside.
func TestTargetAfterASyncKilledBeforeItsRecord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a1 := map[string]string{"SKILL.md": "---\nname: a\ndescription: d\n---\n", "x.md": "x1", "ref/y.md": "y1"}
	a2 := map[string]string{"SKILL.md": "---\nname: a\ndescription: d\n---\n", "x.md": "x2", "ref/y.md": "y2"}
	b1 := map[string]string{"SKILL.md": "---\nname: b\ndescription: d\n---\n", "b.md": "b1"}
	b2 := map[string]string{"SKILL.md": "---\nname: b\ndescription: d\n---\n", "b.md": "b2"}
	set := func(skills map[string]map[string]string) []TargetSkill {
		var out []TargetSkill
		for _, name := range sortedNames(skills) {
			out = append(out, TargetSkill{Skill: mkSkill(name, skills[name])})
		}
		return out
	}
	tests := []struct {
		name             string
		before, killed   map[string]map[string]string
		after            map[string]map[string]string
		edit             bool // the user edits a's copy after the kill
		conflicts, aside int
	}{
		{"back to the version recorded", map[string]map[string]string{"a": a1}, map[string]map[string]string{"a": a2}, map[string]map[string]string{"a": a1}, false, 0, 0},
		{"on to the version killed", map[string]map[string]string{"a": a1}, map[string]map[string]string{"a": a2}, map[string]map[string]string{"a": a2}, false, 0, 0},
		{"a new skill, another version of it", map[string]map[string]string{"a": a1}, map[string]map[string]string{"a": a1, "b": b1}, map[string]map[string]string{"a": a1, "b": b2}, false, 0, 0},
		{"a new skill, gone again", map[string]map[string]string{"a": a1}, map[string]map[string]string{"a": a1, "b": b1}, map[string]map[string]string{"a": a1}, false, 0, 0},
		{"an edit after the kill", map[string]map[string]string{"a": a1}, map[string]map[string]string{"a": a2}, map[string]map[string]string{"a": a1}, true, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if _, err := SyncTarget(ctx, Target{Dir: dir, Skills: set(tt.before)}); err != nil {
				t.Fatal(err)
			}
			// The kill: the record and the marker as they were once every
			// entry was live, put back after the sync finished.
			var record, marker []byte
			kill := func() {
				var err error
				if record, err = os.ReadFile(filepath.Join(dir, RecordName)); err != nil {
					t.Fatal(err)
				}
				if marker, err = os.ReadFile(filepath.Join(dir, targetDirty)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := SyncTarget(ctx, Target{Dir: dir, Skills: set(tt.killed), committed: kill}); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(dir, RecordName), string(record))
			write(t, filepath.Join(dir, targetDirty), string(marker))
			if tt.edit {
				write(t, filepath.Join(dir, "a", "x.md"), "mine")
			}
			rep, err := SyncTarget(ctx, Target{Dir: dir, Skills: set(tt.after)})
			if err != nil || len(rep.Errors) > 0 {
				t.Fatalf("the sync after the kill: %+v, %v", rep, err)
			}
			if len(rep.Conflicts) != tt.conflicts || len(rep.Preserved) != tt.aside {
				t.Errorf("conflicts %v, preserved %v; want %d and %d", rep.Conflicts, rep.Preserved, tt.conflicts, tt.aside)
			}
			for name, files := range tt.after {
				if got, err := readSkill(filepath.Join(dir, name)); err != nil || !sameFiles(got, files) {
					t.Errorf("%s holds %v, %v; want %v", name, got, err, files)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "b")); err == nil && tt.after["b"] == nil {
				t.Error("b, gone from the skills, is still there")
			}
		})
	}
}

func sameFiles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// readSkill reads every file below dir, by slash path.
func readSkill(dir string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	return out, err
}
