package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// TestValidateAndPublishLeaveOutWhatGitIgnores: validate and publish read
// a skill folder in a git work tree as sync reads it, by the rules of the
// work tree's .gitignore and of the user's global excludes file found
// from the command's own environment: validate --strict neither counts
// nor checks the ignored file whose name Windows cannot write, while the
// same folder outside a work tree fails on it; publish leaves the .env
// and node_modules/ out and says so on stderr, and in --json.
func TestValidateAndPublishLeaveOutWhatGitIgnores(t *testing.T) {
	t.Parallel()
	r := gittest.NewRepo(t, "main")
	r.Write(".gitignore", ".env\n", 0)
	skilltest.WriteFile(t, filepath.Join(home(t), ".config", "git", "ignore"), "node_modules/\n")
	files := map[string]string{".env": "API_KEY=sk-live-123\n", "node_modules/x/a:b.js": "j\n"}
	dir := skilltest.Skill(t, filepath.Join(r.Dir, "skills"), "pdf", "Read PDF files.", files)
	outside := skilltest.Skill(t, t.TempDir(), "pdf", "Read PDF files.", files)
	cwd := t.TempDir()

	if v := run(t, cwd, "validate", "--strict", dir); v.code != 0 || v.stdout != "" || v.stderr != "1 skill checked, 0 not valid\n" {
		t.Errorf("validate --strict in the work tree: %d %q %q", v.code, v.stdout, v.stderr)
	}
	if v := run(t, cwd, "validate", "--strict", outside); v.code != 1 || !strings.Contains(v.stdout, "(not-portable)") {
		t.Errorf("validate --strict outside a work tree: %d %q %q", v.code, v.stdout, v.stderr)
	}

	w := newPGWorkspace(t, pgCluster.Get(t), "", "")
	p := run(t, w.dir, "publish", dir, "--to", "team")
	if p.code != 0 || !strings.Contains(p.stderr, "note: published pdf without what git ignores in its folder, which a sync leaves out too: .env, node_modules/\n") {
		t.Errorf("publish: %d %q %q", p.code, p.stdout, p.stderr)
	}
	type output struct {
		Published bool
		Ignored   struct{ Names []string }
	}
	out := decode[output](t, run(t, w.dir, "publish", dir, "--to", "team", "--json"))
	if !out.Published || !slices.Equal(out.Ignored.Names, []string{".env", "node_modules/"}) {
		t.Errorf("publish --json: %+v", out)
	}
}

// TestCommandsSayAFolderIsGitIgnored: validate and propose of a skill
// folder that git ignores as a whole read it, by its own .gitignore alone
// (the .env it names is neither checked nor copied), and say plainly that
// git ignores it, naming the rule's file and line; before, they read it in
// silence. A sync of a dir: source there warns as well.
func TestCommandsSayAFolderIsGitIgnored(t *testing.T) {
	t.Parallel()
	r := gittest.NewRepo(t, "main")
	r.Write(".gitignore", "*.log\nprivate/\n", 0)
	dir := skilltest.Skill(t, filepath.Join(r.Dir, "private"), "pdf", "Read PDF files.", map[string]string{
		".gitignore": ".env\n", ".env": "API_KEY=sk-live-123\n",
	})
	rule := `"private/" (` + filepath.Join(r.Dir, ".gitignore") + ":2)"
	cwd := t.TempDir()
	if v := run(t, cwd, "validate", dir); v.code != 0 || !strings.Contains(v.stdout, "warning: git ignores "+dir) ||
		!strings.Contains(v.stdout, rule) || !strings.Contains(v.stdout, "(gitignored-folder)") {
		t.Errorf("validate: %d %q %q", v.code, v.stdout, v.stderr)
	}
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: team\n    dir: "+filepath.Dir(dir)+"\n")
	p := run(t, ws, "propose", dir)
	if p.code != 0 || !strings.Contains(p.stderr, "warning: git ignores "+dir) || !strings.Contains(p.stderr, rule) {
		t.Errorf("propose: %d %q %q", p.code, p.stdout, p.stderr)
	}
	if fileExists(filepath.Join(ws, "skills", "_drafts", "pdf", ".env")) {
		t.Error("propose copied the .env the folder's .gitignore names")
	}
	if s := run(t, ws, "sync"); s.code != 0 || !strings.Contains(s.stdout+s.stderr, "git ignores "+filepath.Dir(dir)) {
		t.Errorf("sync: %d %q %q", s.code, s.stdout, s.stderr)
	}
}

// TestSyncAndValidateSayASkillFolderIsGitIgnored: a skill folder of a
// dir: source that the source's .gitignore leaves out (*-wip/) is not
// synced, and the sync says which folder and which rule, in its text and
// in --json, and goes on with the rest; validate of that folder says the
// same, and fails nothing. validate of a skill of the source reads it as
// the sync does, without what the source's .gitignore names above it:
// the scratch/ file whose name Windows cannot write, which no sync
// takes, fails no --strict check. Before, the sync dropped pdf-wip in
// silence, validate said it was fine, and validate --strict of tool
// failed on a file that is never synced.
func TestSyncAndValidateSayASkillFolderIsGitIgnored(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	rules := filepath.Join(src, ".gitignore")
	skilltest.WriteFile(t, rules, "*-wip/\nscratch/\n")
	tool := skilltest.Skill(t, src, "tool", "A tool.", map[string]string{"scratch/a:b.md": "s\n"})
	wip := skilltest.Skill(t, src, "pdf-wip", "Not yet.", nil)
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: team\n    dir: "+src+"\n")
	rule := `"*-wip/" (` + rules + ":1)"

	s := run(t, ws, "sync")
	if s.code != 0 || !strings.Contains(s.stderr, "skill folder "+wip+" is left out of the sync") || !strings.Contains(s.stderr, rule) ||
		!strings.Contains(s.stderr, "(gitignored-skill)") || !fileExists(filepath.Join(ws, ".skills-cache", "team", "tool", "SKILL.md")) {
		t.Errorf("sync: %d %q %q", s.code, s.stdout, s.stderr)
	}
	skilltest.Skill(t, src, "next-wip", "Later.", nil)
	type report struct {
		Problems []struct{ Source, Rule, Path, Message string }
	}
	var found []string
	for _, p := range decode[report](t, run(t, ws, "sync", "--json")).Problems {
		if p.Rule == "gitignored-skill" && p.Source == "team" && p.Path == rules {
			found = append(found, p.Message)
		}
	}
	if len(found) != 2 || !strings.Contains(found[0], filepath.Join(src, "next-wip")) || !strings.Contains(found[1], wip) {
		t.Errorf("sync --json: gitignored-skill warnings %q, want next-wip's and pdf-wip's", found)
	}

	if v := run(t, ws, "validate", wip); v.code != 0 || !strings.Contains(v.stdout, "(gitignored-skill)") || !strings.Contains(v.stdout, rule) ||
		!strings.Contains(v.stdout, "no sync takes it") || v.stderr != "1 skill checked, 0 not valid\n" {
		t.Errorf("validate of the folder left out: %d %q %q", v.code, v.stdout, v.stderr)
	}
	if v := run(t, ws, "validate", "--strict", tool); v.code != 0 || v.stdout != "" {
		t.Errorf("validate --strict of a skill of the source: %d %q %q", v.code, v.stdout, v.stderr)
	}
}
