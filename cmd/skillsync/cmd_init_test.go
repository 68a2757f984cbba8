package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoWorkspaceInTheHomeFolder: in the home folder, with no config,
// sync, init and add refuse (exit 2) and write nothing there: a starter
// config left behind would fail every command below it.
func TestNoWorkspaceInTheHomeFolder(t *testing.T) {
	t.Parallel()
	h := t.TempDir()
	writeTree(t, h, map[string]string{"team/a/SKILL.md": "---\nname: a\ndescription: The a skill.\n---\nBody.\n"})
	env := []string{"HOME=" + h, "XDG_CONFIG_HOME=" + filepath.Join(h, ".config"), "XDG_CACHE_HOME=" + filepath.Join(h, ".cache")}
	for _, args := range [][]string{{"sync"}, {"init", "--agent", "claude"}, {"add", "./team"}} {
		if r := runEnv(t, h, env, args...); r.code != 2 || !strings.Contains(r.stderr, "is the home directory") {
			t.Errorf("%v in the home folder: %d %s", args, r.code, r.stderr)
		}
		entries, _ := os.ReadDir(h)
		for _, e := range entries {
			if e.Name() != "team" && e.Name() != ".config" && e.Name() != ".cache" {
				t.Errorf("%v in the home folder wrote %s", args, e.Name())
			}
		}
	}
	if r := runEnv(t, h, env, "-g", "init"); r.code != 0 {
		t.Errorf("init -g in the home folder: %d %s", r.code, r.stderr)
	}
}
