package materialize

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestParentSwappedAfterTheCheck: a folder on the way to the target
// swapped for a link to a folder elsewhere by another process after
// SyncTarget's last look (the window between the check and the writes,
// hit here by the test hook Target.checked) changes nothing of where
// the sync writes: the target folder is held open, and every file,
// folder, link, rename, removal, mark and record goes into the folder
// that was checked. Nothing changes where the link leads, even where
// that folder is a copy of the target.
func TestParentSwappedAfterTheCheck(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows resolves the target by path (docs/platforms.md)")
	}
	t.Parallel()
	ctx := context.Background()
	v1 := map[string]string{"SKILL.md": "---\nname: alpha\ndescription: A.\n---\n", "ref/a.md": "a", "ref/b.md": "b"}
	v2 := map[string]string{"SKILL.md": "---\nname: alpha\ndescription: A.\n---\n", "ref/a.md": "a2", "ref/b.md": "b", "run.sh": "#!/bin/sh\n"}
	beta := map[string]string{"SKILL.md": "---\nname: beta\ndescription: B.\n---\n"}
	cases := []struct {
		name   string
		mode   TargetMode
		before map[string]map[string]string // what a first sync placed
		after  map[string]map[string]string
		deep   bool // the link swapped in is the target's own parent, else one above it
	}{
		{"a first sync", Copy, nil, map[string]map[string]string{"alpha": v1, "beta": beta}, false},
		{"an update and a removal", Copy, map[string]map[string]string{"alpha": v1, "beta": beta}, map[string]map[string]string{"alpha": v2}, true},
		{"one file patched", Copy, map[string]map[string]string{"alpha": v1}, map[string]map[string]string{"alpha": map[string]string{"SKILL.md": v1["SKILL.md"], "ref/a.md": "a3", "ref/b.md": "b"}}, false},
		{"links", Symlink, nil, map[string]map[string]string{"alpha": v1}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ws, outside, src := t.TempDir(), t.TempDir(), t.TempDir()
			parent := filepath.Join(ws, ".claude")
			dir := filepath.Join(parent, "skills")
			if c.deep {
				parent = filepath.Join(ws, ".claude", "skills")
				dir = filepath.Join(parent, "agent")
			}
			// Where the link will lead, the folders a write through it
			// would need are there.
			there := filepath.Join(outside, filepath.Base(dir))
			if err := os.MkdirAll(there, 0o755); err != nil {
				t.Fatal(err)
			}
			// A file there named as a killed sync's temporary record: the
			// sweep of the folder checked must not take it.
			planted := filepath.Join(there, "."+RecordName+".tmp-planted")
			if err := os.WriteFile(planted, []byte("theirs"), 0o644); err != nil {
				t.Fatal(err)
			}
			skills := func(set map[string]map[string]string) []TargetSkill {
				var out []TargetSkill
				for name, files := range set {
					s := TargetSkill{Skill: mkSkill(name, files)}
					if c.mode == Symlink {
						s.Dir = filepath.Join(src, name)
					}
					out = append(out, s)
				}
				return out
			}
			if c.before != nil {
				if _, err := SyncTarget(ctx, Target{Dir: dir, Mode: c.mode, Skills: skills(c.before), Workspace: ws, Root: ws}); err != nil {
					t.Fatal(err)
				}
			}
			if c.before != nil {
				// Where the link will lead, a copy of the target: what the
				// sync reads by path there looks as it should, so that it
				// updates, patches and removes.
				copyTree(t, dir, there)
			}
			before := snapshot(t, outside)
			moved := parent + "-moved"
			swap := func() {
				if err := os.Rename(parent, moved); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(outside, parent); err != nil {
					t.Fatal(err)
				}
			}
			report, err := SyncTarget(ctx, Target{Dir: dir, Mode: c.mode, Skills: skills(c.after), Workspace: ws, Root: ws, checked: swap})
			if err != nil {
				t.Fatal(err)
			}
			if len(report.Errors) > 0 {
				t.Errorf("errors: %v", report.Errors)
			}
			if after := snapshot(t, outside); !maps.Equal(before, after) {
				t.Fatalf("changed where the link leads:\nbefore %v\nafter  %v", before, after)
			}
			// The sync went on in the folder it checked, now moved.
			real := filepath.Join(moved, filepath.Base(dir))
			if c.deep {
				real = filepath.Join(moved, "agent")
			}
			for name, files := range c.after {
				for p, want := range files {
					got, err := os.ReadFile(filepath.Join(real, name, filepath.FromSlash(p)))
					if c.mode == Symlink {
						link, lerr := os.Readlink(filepath.Join(real, name))
						if lerr != nil || link != filepath.Join(src, name) {
							t.Errorf("%s: link %q, %v", name, link, lerr)
						}
						break
					}
					if err != nil || string(got) != want {
						t.Errorf("%s/%s holds %q, %v; want %q", name, p, got, err, want)
					}
				}
			}
			for name := range c.before {
				if _, placed := c.after[name]; !placed {
					if _, err := os.Lstat(filepath.Join(real, name)); err == nil {
						t.Errorf("%s, taken out, is still in the folder checked", name)
					}
				}
			}
			if _, err := os.Lstat(filepath.Join(real, RecordName)); err != nil {
				t.Errorf("no record in the folder checked: %v", err)
			}
		})
	}
}
