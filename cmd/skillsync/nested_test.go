package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestNoSecondWorkspaceInASubfolder: a command that writes the workspace,
// run in a project's subfolder with no skillsync.yaml of its own, started
// a second workspace there (a config, a cache, a lock, skills/) with only
// a warning. It refuses with exit 2 and writes nothing; the read commands
// warn, the same commands work at the root, with --config, and in the
// subfolder once init made it a workspace on purpose.
func TestNoSecondWorkspaceInASubfolder(t *testing.T) {
	t.Parallel()
	proj := t.TempDir()
	writeTree(t, proj, map[string]string{
		"skillsync.yaml":   "workspace: .\ntargets: []\nrepositories:\n  - dir: team\n",
		"team/a/SKILL.md":  "---\nname: a\ndescription: The a skill.\n---\nBody.\n",
		"other/b/SKILL.md": "---\nname: b\ndescription: The b skill.\n---\nBody.\n",
		"src/keep":         "",
	})
	sub := filepath.Join(proj, "src")
	cfg := filepath.Join(proj, "skillsync.yaml")
	want := "no skillsync.yaml here, but " + cfg + " is in a folder above: run skillsync in " + proj + ", pass --config " + cfg + ", or run skillsync init here to start a workspace of its own"
	for _, args := range [][]string{
		{"sync"},
		{"update"},
		{"add", filepath.Join(proj, "other")},
		{"add", filepath.Join(proj, "other"), "--no-sync"},
		{"curate"},
		{"verify", "--repair"},
		{"new", "fresh"},
	} {
		r := run(t, sub, args...)
		if r.code != 2 || !strings.Contains(r.stderr, want) {
			t.Errorf("%v in a subfolder: exit %d\n%s\nwant 2 and %q", args, r.code, r.stderr, want)
		}
	}
	for _, p := range []string{"skillsync.yaml", "skillsync.lock", ".skills-cache", "skills"} {
		if fileExists(filepath.Join(sub, p)) {
			t.Errorf("a refused command wrote %s in the subfolder", p)
		}
	}
	if r := run(t, sub, "list"); r.code != 0 || !strings.Contains(r.stderr, cfg+" is in a folder above") {
		t.Errorf("list in a subfolder warns and runs: %d %s", r.code, r.stderr)
	}
	if r := run(t, sub, "--config", cfg, "sync"); r.code != 0 || !fileExists(filepath.Join(proj, ".skills-cache", "team", "a", "SKILL.md")) {
		t.Errorf("sync --config in a subfolder: %d %s", r.code, r.stderr)
	}
	if r := runEnv(t, sub, []string{"SKILLSYNC_CONFIG=" + cfg}, "update"); r.code != 0 {
		t.Errorf("update with $SKILLSYNC_CONFIG in a subfolder: %d %s", r.code, r.stderr)
	}
	if r := run(t, sub, "-g", "add", filepath.Join(proj, "team"), "--agent", "none"); r.code != 0 || fileExists(filepath.Join(sub, "skillsync.yaml")) {
		t.Errorf("-g add in a subfolder: %d %s", r.code, r.stderr)
	}
	if r := run(t, proj, "add", "./other"); r.code != 0 {
		t.Errorf("add at the root: %d %s", r.code, r.stderr)
	}
	if r := run(t, sub, "init", "--agent", "none"); r.code != 0 {
		t.Fatalf("init in the subfolder: %d %s", r.code, r.stderr)
	}
	if r := run(t, sub, "add", filepath.Join(proj, "team")); r.code != 0 || !fileExists(filepath.Join(sub, ".skills-cache", "team", "a", "SKILL.md")) {
		t.Errorf("add in the subfolder after init: %d %s", r.code, r.stderr)
	}
	if r := run(t, sub, "sync"); r.code != 0 {
		t.Errorf("sync in the subfolder after init: %d %s", r.code, r.stderr)
	}
}
