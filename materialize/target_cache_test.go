package materialize

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/skillsync/skillsync/workspace"
)

// TestTargetInsideACacheIsRefused: a target folder inside another
// workspace's cache (../other/.skills-cache/team) is that workspace's
// own: a sync into it adopted the skills it found there, exactly what it
// would write, and removed them from that cache when the skill left its
// sources or the target left its config, so that the other workspace's
// reads failed. It is refused before anything is written, and a folder
// there that a sync recorded before is not given up either.
func TestTargetInsideACacheIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	other, ws := t.TempDir(), t.TempDir()
	cached := filepath.Join(other, workspace.CacheName, "team")
	skill := mkSkill("alpha", v1)
	for p, c := range v1 {
		writeFileAll(t, filepath.Join(cached, "alpha", p), c)
	}
	if _, err := SyncTarget(ctx, Target{Dir: cached, Mode: Copy, Skills: []TargetSkill{{Skill: skill}}, Workspace: ws}); err == nil {
		t.Error("a target inside a cache was synced")
	}
	if _, err := os.Lstat(filepath.Join(cached, RecordName)); err == nil {
		t.Error("a record was written inside the cache")
	}
	// A record an earlier sync left there: giving the folder up removes
	// nothing of the cache.
	root := t.TempDir()
	plain := filepath.Join(root, "x", "team")
	if _, err := SyncTarget(ctx, Target{Dir: plain, Mode: Copy, Skills: []TargetSkill{{Skill: skill}}, Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(root, workspace.CacheName)
	if err := os.Rename(filepath.Join(root, "x"), cache); err != nil {
		t.Fatal(err)
	}
	if _, done, err := GiveUpTarget(ctx, filepath.Join(cache, "team"), ws, time.Second); err == nil || done {
		t.Errorf("a folder inside a cache was given up: %v %v", done, err)
	}
	for _, dir := range []string{cached, filepath.Join(cache, "team")} {
		for p, c := range v1 {
			if got := readFile(t, filepath.Join(dir, "alpha", p)); got != c {
				t.Errorf("%s: %q", filepath.Join(dir, "alpha", p), got)
			}
		}
	}
}

func writeFileAll(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTargetInAWorkspacesSkillsFolderIsRefused: another workspace's
// skills folder (skills/ beside its skillsync.yaml) holds that
// workspace's own skills; one equal to a synced skill was adopted, then
// removed when the skill or the target went. It is refused, and so is a
// folder inside it; a skills folder of no workspace (.claude/skills) is
// a target like any other.
func TestTargetInAWorkspacesSkillsFolderIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	other, ws := t.TempDir(), t.TempDir()
	writeFileAll(t, filepath.Join(other, workspace.ConfigName), "repositories: []\n")
	layer := filepath.Join(other, workspace.SkillsName)
	skill := mkSkill("alpha", v1)
	for p, c := range v1 {
		writeFileAll(t, filepath.Join(layer, "alpha", p), c)
	}
	for _, dir := range []string{layer, filepath.Join(layer, "nested")} {
		if _, err := SyncTarget(ctx, Target{Dir: dir, Mode: Copy, Skills: []TargetSkill{{Skill: skill}}, Workspace: ws}); err == nil {
			t.Errorf("a target at %s was synced", dir)
		}
	}
	if _, err := os.Lstat(filepath.Join(layer, RecordName)); err == nil {
		t.Error("a record was written in the workspace's skills folder")
	}
	agents := filepath.Join(other, ".claude", workspace.SkillsName)
	if _, err := SyncTarget(ctx, Target{Dir: agents, Mode: Copy, Skills: []TargetSkill{{Skill: skill}}, Workspace: ws}); err != nil {
		t.Errorf("an agent's skills folder in a workspace: %v", err)
	}
}
