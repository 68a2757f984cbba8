package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// TestSyncExitCombinations: whatever mix of outcomes one sync meets (a
// source failed, a target refused, a frozen mismatch, a config that does
// not load), it exits with the most severe (2 over 1 over 3 over 0, as
// the README's table says), and says every one: --json's outcomes list
// them and its exit_code is the exit status; the human output names each
// and, when several apply, which decided the status.
func TestSyncExitCombinations(t *testing.T) {
	t.Parallel()
	type combo struct{ failed, refused, frozen, config bool }
	var combos []combo
	for i := range 16 {
		combos = append(combos, combo{failed: i&1 != 0, refused: i&2 != 0, frozen: i&4 != 0, config: i&8 != 0})
	}
	for _, c := range combos {
		var name []string
		for _, n := range []struct {
			on   bool
			what string
		}{{c.failed, "failed"}, {c.refused, "refused"}, {c.frozen, "frozen"}, {c.config, "config"}} {
			if n.on {
				name = append(name, n.what)
			}
		}
		if len(name) == 0 {
			name = []string{"ok"}
		}
		t.Run(strings.Join(name, "+"), func(t *testing.T) {
			t.Parallel()
			repo := gittest.NewRepo(t, "main")
			repo.Skill("pdf", "Read PDF files.")
			repo.Commit("one")
			ws, outside := t.TempDir(), t.TempDir()
			skilltest.WriteFile(t, filepath.Join(ws, "local", "notes", "SKILL.md"), "---\nname: notes\ndescription: Take notes.\n---\n")
			config := "repositories:\n  - name: local\n    dir: local\n  - name: team\n    git: " + repo.URL() + "\ntargets:\n  - dir: .claude/skills\n"
			skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), config)
			if r := run(t, ws, "sync"); r.code != 0 {
				t.Fatalf("first sync: %d\n%s", r.code, r.stderr)
			}
			if c.failed {
				// The machine's git store goes too: sync --frozen takes the
				// locked revision from it without asking the remote.
				for _, err := range []error{os.Rename(repo.Dir, repo.Dir+".gone"), os.RemoveAll(filepath.Join(home(t), ".cache", "skillsync", "git"))} {
					if err != nil {
						t.Fatal(err)
					}
				}
			}
			if c.refused {
				if err := os.RemoveAll(filepath.Join(ws, ".claude")); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(outside, filepath.Join(ws, ".claude")); err != nil {
					t.Skip("no symbolic links here:", err)
				}
			}
			args := []string{"sync"}
			if c.frozen {
				skilltest.WriteFile(t, filepath.Join(ws, "local", "notes", "SKILL.md"), "---\nname: notes\ndescription: Take notes, changed.\n---\n")
				args = append(args, "--frozen")
			}
			if c.config {
				skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), config+"repositories: [\n")
			}

			want, outcomes := 0, []string{}
			if c.frozen {
				outcomes = append(outcomes, "frozen")
			}
			if c.refused {
				outcomes = append(outcomes, "target-refused")
			}
			if c.failed {
				outcomes = append(outcomes, "partial")
			}
			switch {
			case c.config:
				want = 2
			case c.frozen || c.refused:
				want = 1
			case c.failed:
				want = 3
			}

			r := run(t, ws, append(args, "--json")...)
			if r.code != want {
				t.Errorf("sync --json exits %d, want %d\n%s", r.code, want, r.stderr)
			}
			if c.config {
				if r.stdout != "" || !strings.Contains(r.stderr, "skillsync.yaml") {
					t.Errorf("a config that does not load: stdout %q, stderr %q", r.stdout, r.stderr)
				}
			} else {
				js := decode[struct {
					ExitCode int `json:"exit_code"`
					Outcomes []string
					Frozen   []string
					Sources  []struct{ Source, Status string }
					Targets  []struct{ Refused bool }
				}](t, r)
				if js.ExitCode != r.code || !slices.Equal(js.Outcomes, outcomes) {
					t.Errorf("--json says exit %d, outcomes %q; want %d, %q", js.ExitCode, js.Outcomes, r.code, outcomes)
				}
				if (len(js.Frozen) > 0) != c.frozen || slices.ContainsFunc(js.Sources, func(s struct{ Source, Status string }) bool { return s.Status == "failed" }) != c.failed ||
					slices.ContainsFunc(js.Targets, func(t struct{ Refused bool }) bool { return t.Refused }) != c.refused {
					t.Errorf("--json's report does not match: %s", r.stdout)
				}
			}

			r = run(t, ws, args...)
			if r.code != want {
				t.Errorf("sync exits %d, want %d\n%s", r.code, want, r.stderr)
			}
			for _, s := range []struct {
				on   bool
				says string
			}{
				{c.failed && !c.config, "source team failed and kept its last good files"},
				{c.refused && !c.config, "is a symbolic link"},
				{c.frozen && !c.config, "the lock file does not match"},
				{len(outcomes) > 1 && !c.config, "exit status 1, the most severe of: "},
				{c.config, "skillsync.yaml"},
			} {
				if got := strings.Contains(r.stderr, s.says); got != s.on {
					t.Errorf("stderr says %q: %v, want %v\n%s", s.says, got, s.on, r.stderr)
				}
			}
		})
	}
}
