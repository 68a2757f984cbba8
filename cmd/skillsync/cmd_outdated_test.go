package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutdatedExitsOnSourcesItCannotCheck: outdated exits 0 whether or
// not a source moved, but a source it could not check makes it exit 3
// (some could not be checked) or 1 (none could), as fetch does, text or
// JSON.
func TestOutdatedExitsOnSourcesItCannotCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gone := "  - name: gone\n    git: file://" + filepath.Join(dir, "no-such-repo") + "\n"
	writeTree(t, dir, map[string]string{
		"team/a/SKILL.md": "---\nname: a\ndescription: The a skill.\n---\nBody.\n",
		"good.yaml":       "repositories:\n  - name: team\n    dir: team\n",
		"some.yaml":       "repositories:\n  - name: team\n    dir: team\n" + gone,
		"none.yaml":       "repositories:\n" + gone,
	})
	for _, tt := range []struct {
		config string
		code   int
	}{{"good.yaml", 0}, {"some.yaml", 3}, {"none.yaml", 1}} {
		r := run(t, dir, "--config", tt.config, "outdated")
		if r.code != tt.code || (tt.code != 0) != strings.Contains(r.stderr, "skillsync: source gone:") {
			t.Errorf("%s: exit %d, want %d\n%s%s", tt.config, r.code, tt.code, r.stdout, r.stderr)
		}
		r = run(t, dir, "--config", tt.config, "outdated", "--json")
		var out []struct{ Source, Error string }
		if err := json.Unmarshal([]byte(r.stdout), &out); r.code != tt.code || err != nil || len(out) == 0 {
			t.Errorf("%s --json: exit %d, want %d: %v\n%s%s", tt.config, r.code, tt.code, err, r.stdout, r.stderr)
		}
	}
}
