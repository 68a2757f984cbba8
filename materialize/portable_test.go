package materialize

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// portableCache is a cache whose writer has the rules of a
// case-insensitive Windows file system forced on, on this system.
func portableCache(t *testing.T, root string) *Cache {
	t.Helper()
	c := open(t, root)
	c.writer.rules = fsRules{foldCase: true, windowsNames: true, noExecBit: true}
	return c
}

func TestCaseAndWindowsNamesForced(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	c := portableCache(t, root)
	res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "r1", Skills: []Skill{
		mkSkill("fine", map[string]string{"SKILL.md": "x", "docs/a.md": "a", "docs/b.md": "b"}),
		mkSkill("readmes", map[string]string{"SKILL.md": "x", "README.md": "1", "readme.md": "2"}),
		mkSkill("folders", map[string]string{"SKILL.md": "x", "Docs/a.md": "a", "docs/b.md": "b"}),
		mkSkill("colon", map[string]string{"SKILL.md": "x", "notes/a:b.md": "a"}),
		mkSkill("device", map[string]string{"SKILL.md": "x", "scripts/nul.txt": "a"}),
		mkSkill("con", map[string]string{"SKILL.md": "x"}),
		mkSkill("Fine", map[string]string{"SKILL.md": "y"}),
	}})
	if err := c.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{ // skill -> file the problem names
		"readmes": "readme.md",
		"folders": "docs/b.md",
		"colon":   "notes/a:b.md",
		"device":  "scripts/nul.txt",
		"con":     "",
		"Fine":    "",
	}
	got := map[string]string{}
	for _, err := range res.Errors {
		var se *SkillError
		if !errors.As(err, &se) {
			t.Errorf("error %v is not a SkillError", err)
			continue
		}
		if se.Source != "src" || !strings.Contains(err.Error(), se.Skill) {
			t.Errorf("error %v does not name its source and skill", err)
		}
		got[se.Skill] = se.Path
	}
	for skill, file := range want {
		p, ok := got[skill]
		if !ok {
			t.Errorf("skill %s: no problem", skill)
		} else if p != file {
			t.Errorf("skill %s: problem names file %q, want %q", skill, p, file)
		}
	}
	if len(got) != len(want) {
		t.Errorf("problems for %v, want %v", got, want)
	}
	names := entries(t, filepath.Join(root, "src"))
	if len(names) != 1 || names[0] != "fine" {
		t.Errorf("the cache holds %v, want only fine: nothing of a refused skill is written", names)
	}
	// The same skills on this system's own rules are written.
	if hostRules() == (fsRules{}) {
		root2 := t.TempDir()
		_, _ = syncOnce(t, root2, "r1", mkSkill("readmes", map[string]string{"SKILL.md": "x", "README.md": "1", "readme.md": "2"}))
		if readFile(t, filepath.Join(root2, "src", "readmes", "readme.md")) != "2" {
			t.Error("a case-sensitive system refused two names differing in case")
		}
	}
}

// TestExecutableBitIsNoDriftWithoutOne: where the system keeps no
// executable bit (Windows), a live file whose mode differs from its
// record is not a change; where it keeps one, it is.
func TestExecutableBitIsNoDriftWithoutOne(t *testing.T) {
	t.Parallel()
	sk := mkSkill("tool", map[string]string{"SKILL.md": "x", "run.sh": "#!/bin/sh\n"})
	for _, forced := range []bool{false, true} {
		root := t.TempDir()
		syncOnce(t, root, "r1", sk)
		script := filepath.Join(root, "src", "tool", "run.sh")
		if err := os.Chmod(script, 0o644); err != nil {
			t.Fatal(err)
		}
		c := open(t, root)
		if forced {
			c.writer.rules = fsRules{noExecBit: true}
		}
		c.writer.check = CheckHash
		res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "r2", Skills: []Skill{sk}})
		if err := c.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
		c.Close()
		info, err := os.Stat(script)
		if err != nil {
			t.Fatal(err)
		}
		rewritten := info.Mode().Perm() == 0o755
		if forced && (len(res.Changes) != 0 || rewritten) {
			t.Errorf("without an executable bit: changes %v, mode %v; want none", res.Changes, info.Mode())
		}
		if !forced && !rewritten {
			t.Errorf("with an executable bit: mode %v after the sync, want it put back to 0755 (changes %v)", info.Mode(), res.Changes)
		}
	}
	if !(fsRules{noExecBit: true}).permMatches(0o666, 0o755) || (fsRules{}).permMatches(0o644, 0o755) {
		t.Error("permMatches")
	}
}
