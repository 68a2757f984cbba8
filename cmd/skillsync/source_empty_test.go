package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/skilltest"
)

// TestSourceEmptySaysTheGitignoreRule: a dir: source whose .gitignore
// rules leave out every skill (a top-level "*", or "*" with "!*/" that
// leaves the folders in and their SKILL.md out) yields no skills, and
// source-empty says a rule did it, naming the rule and its .gitignore,
// rather than suggest path:; at the sync that reads the source and at
// the one with nothing new after it. A source with no skill and no rule
// still points to path:.
func TestSourceEmptySaysTheGitignoreRule(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, gitignore, want string
	}{
		{"folders", "*\n", `the folder skills, by the rule "*" (`},
		{"skill files", "*\n!*/\n", `the file skills/pdf/SKILL.md, by the rule "*" (`},
		{"no rule", "", "set path: to the folder that holds them"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			src := filepath.Join(ws, "src")
			if tc.gitignore != "" {
				skilltest.Skill(t, filepath.Join(src, "skills"), "pdf", "Read PDFs.", nil)
				skilltest.WriteFile(t, filepath.Join(src, ".gitignore"), tc.gitignore)
			} else {
				skilltest.WriteFile(t, filepath.Join(src, "README.md"), "no skills here\n")
			}
			skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: team\n    dir: src\n")
			for _, when := range []string{"first sync", "no-op sync"} {
				r := run(t, ws, "sync")
				if r.code != 0 || !strings.Contains(r.stderr, "source team yields no skills") || !strings.Contains(r.stderr, tc.want) {
					t.Errorf("%s: exit %d, stderr does not say %q:\n%s", when, r.code, tc.want, r.stderr)
				}
				if tc.gitignore != "" && (strings.Contains(r.stderr, "set path:") || !strings.Contains(r.stderr, filepath.Join(src, ".gitignore")+":1")) {
					t.Errorf("%s: source-empty does not name the .gitignore, or suggests path:\n%s", when, r.stderr)
				}
			}
		})
	}
}
