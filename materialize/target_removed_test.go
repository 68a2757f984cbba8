package materialize

import (
	"context"
	"maps"
	"testing"
)

// A target's report counts every file a sync took out of it: a kept
// skill's file that its new version drops, whether the skill is patched
// (the one file removed) or built again, as well as the files of a skill
// taken out whole.
func TestTargetReportCountsFilesRemovedFromAKeptSkill(t *testing.T) {
	t.Parallel()
	base := map[string]string{"SKILL.md": "---\nname: a\ndescription: d\n---\n", "x.md": "x1", "ref/y.md": "y", "ref/z.md": "z"}
	with := func(change map[string]string, drop ...string) map[string]string {
		m := maps.Clone(base)
		maps.Copy(m, change)
		for _, p := range drop {
			delete(m, p)
		}
		return m
	}
	other := map[string]string{"SKILL.md": "---\nname: b\ndescription: d\n---\n", "b.md": "b"}
	tests := []struct {
		name             string
		next             []TargetSkill
		written, removed int
	}{
		{"one file dropped (a patch)", []TargetSkill{{Skill: mkSkill("a", with(nil, "ref/z.md"))}}, 0, 1},
		{"a file dropped, another changed (a build)", []TargetSkill{{Skill: mkSkill("a", with(map[string]string{"x.md": "x2"}, "ref/z.md"))}}, 1, 1},
		{"two files dropped", []TargetSkill{{Skill: mkSkill("a", with(nil, "ref/y.md", "x.md"))}}, 0, 2},
		{"a file added", []TargetSkill{{Skill: mkSkill("a", with(map[string]string{"new.md": "n"}))}}, 1, 0},
		{"the copy made a link", []TargetSkill{{Skill: mkSkill("a", base), Dir: "/elsewhere/a"}}, 1, 4},
		{"the skill taken out", []TargetSkill{{Skill: mkSkill("b", other)}}, 2, 4},
		{"nothing changed", []TargetSkill{{Skill: mkSkill("a", base)}}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			mode := Copy
			if tt.next[0].Dir != "" {
				mode = Symlink
			}
			if rep, err := SyncTarget(context.Background(), Target{Dir: dir, Mode: mode, Skills: []TargetSkill{{Skill: mkSkill("a", base)}}}); err != nil || len(rep.Errors) > 0 {
				t.Fatalf("first sync: %+v %v", rep, err)
			}
			rep, err := SyncTarget(context.Background(), Target{Dir: dir, Mode: mode, Skills: tt.next})
			if err != nil || len(rep.Errors) > 0 {
				t.Fatalf("second sync: %+v %v", rep, err)
			}
			if rep.Written != tt.written || rep.Removed != tt.removed {
				t.Errorf("written %d, removed %d; want %d, %d", rep.Written, rep.Removed, tt.written, tt.removed)
			}
		})
	}
}
