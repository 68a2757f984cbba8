package main

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/repository/git"
)

// teamRepo is a repository of three skills, served over smart HTTP as
// acme/team-skills: the shape of "owner/repo" on a git host.
type teamRepo struct {
	repo *gittest.Repo
	srv  *gittest.HTTPServer
	root string // the served folder
	// host is what SKILLSYNC_GIT_HOST gets.
	host string
	v1   string
}

func newTeamRepo(t *testing.T) *teamRepo {
	t.Helper()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/pdf", "Fill in PDF forms.")
	up.Skill("skills/release-notes", "Draft release notes from merged pull requests.")
	v1 := up.Commit("v1")
	up.Git("tag", "v1")
	up.Skill("skills/docx", "Edit Word documents.")
	up.Commit("v2")
	root := t.TempDir()
	bare := filepath.Join(root, "acme", "team-skills.git")
	if out, err := exec.Command("git", "clone", "-q", "--bare", up.Dir, bare).CombinedOutput(); err != nil {
		t.Fatalf("git clone --bare: %v\n%s", err, out)
	}
	srv := gittest.ServeHTTP(t, root, "", "")
	return &teamRepo{repo: up, srv: srv, root: root, host: srv.URL, v1: v1}
}

func (r *teamRepo) env() []string { return []string{"SKILLSYNC_GIT_HOST=" + r.host} }

type addResult struct {
	Config, Source string
	Created, Added bool
	Skills         []string
	Targets        []string
	Sync           *syncJSON
}

// TestAddShorthand adds owner/repo resolved against a local smart-HTTP
// server named by SKILLSYNC_GIT_HOST, the way a team adds its repository
// from GitHub, after init --agent wrote its target.
func TestAddShorthand(t *testing.T) {
	t.Parallel()
	team := newTeamRepo(t)
	ws := t.TempDir()
	if r := run(t, ws, "init", "--agent", "claude"); r.code != 0 {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	r := runEnv(t, ws, team.env(), "add", "acme/team-skills", "--json")
	if r.code != 0 {
		t.Fatalf("add: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	res := decode[addResult](t, r)
	if !res.Added || res.Source != "team-skills" || res.Created || res.Sync == nil {
		t.Fatalf("add = %+v", res)
	}
	cfgText := skilltest.ReadFile(t, filepath.Join(ws, "skillsync.yaml"))
	if !strings.Contains(cfgText, "  - name: team-skills\n    git: "+team.host+"/acme/team-skills\n") {
		t.Errorf("the config lacks the entry:\n%s", cfgText)
	}
	if !strings.HasPrefix(cfgText, config.Starter[:200]) {
		t.Errorf("the starter's text was changed:\n%s", cfgText)
	}
	for _, name := range []string{"pdf", "release-notes", "docx"} {
		if !fileExists(filepath.Join(ws, ".claude", "skills", name, "SKILL.md")) {
			t.Errorf("%s did not reach the target", name)
		}
	}

	// The same repository again, spelled as a URL: not added twice.
	r = runEnv(t, ws, team.env(), "add", team.host+"/acme/team-skills.git", "--no-sync")
	if r.code != 0 || !strings.Contains(r.stdout, "source team-skills is already there") {
		t.Errorf("add again: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if got := skilltest.ReadFile(t, filepath.Join(ws, "skillsync.yaml")); got != cfgText {
		t.Errorf("adding a repository already there changed the config:\n%s", got)
	}

	// owner/repo@ref is another source, pinned to the tag. (In a
	// workspace of its own: a second ref of a remote whose shallow store
	// holds the first is a fetch bug of the git adapter, reported.)
	t.Run("at ref", func(t *testing.T) {
		ws := t.TempDir()
		r := runEnv(t, ws, team.env(), "add", "acme/team-skills@v1", "--json")
		res := decode[addResult](t, r)
		if r.code != 0 || res.Source != "team-skills" || res.Sync == nil {
			t.Fatalf("add @v1: %d %+v %s", r.code, res, r.stderr)
		}
		for _, s := range res.Sync.Sources {
			if s.Source == "team-skills" && s.Revision != team.v1 {
				t.Errorf("@v1 synced %s, want the tag's commit %s", s.Revision, team.v1)
			}
		}
		if !strings.Contains(skilltest.ReadFile(t, filepath.Join(ws, "skillsync.yaml")), "    ref: v1\n") {
			t.Error("the ref is not in the config")
		}
	})

	// A web URL of a folder gives the ref and the path.
	r = runEnv(t, ws, team.env(), "add", team.host+"/acme/team-skills/tree/main/skills/pdf", "--name", "pdf-only", "--json")
	res = decode[addResult](t, r)
	if r.code != 0 || res.Source != "pdf-only" {
		t.Fatalf("add a tree URL: %d %+v %s", r.code, res, r.stderr)
	}
	for _, s := range res.Sync.Sources {
		if s.Source == "pdf-only" && s.Skills != 1 {
			t.Errorf("the tree URL's source has %d skills, want pdf alone", s.Skills)
		}
	}
	cfg, err := config.Load(filepath.Join(ws, "skillsync.yaml"), skillsync.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	last, _ := cfg.Sources[len(cfg.Sources)-1].Settings.(*git.Settings)
	if last == nil || last.Ref != "main" || last.Path != "skills/pdf" || last.URL != team.host+"/acme/team-skills" {
		t.Errorf("tree URL entry = %+v", last)
	}

	// Appending by hand at the end of the file still lands in the
	// repositories (init --agent once wrote targets: last, so it did not).
	f, err := os.OpenFile(filepath.Join(ws, "skillsync.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("  - name: by-hand\n    dir: hand\n")
	f.Close()
	if r := run(t, ws, "list"); r.code != 0 {
		t.Errorf("the config does not load after an entry was appended: %d %s", r.code, r.stderr)
	}
}

// TestAddSkillSelection writes skills: and extends it; what the selection
// selects is the repository package's business.
func TestAddSkillSelection(t *testing.T) {
	t.Parallel()
	team := newTeamRepo(t)
	ws := t.TempDir()
	r := runEnv(t, ws, team.env(), "add", "acme/team-skills", "--skill", "pdf", "--no-sync", "--json")
	res := decode[addResult](t, r)
	if r.code != 0 || !res.Created || !res.Added || res.Sync != nil {
		t.Fatalf("add --skill: %d %+v %s", r.code, res, r.stderr)
	}
	r = runEnv(t, ws, team.env(), "add", "acme/team-skills", "-s", "docx", "-s", "pdf", "--no-sync")
	if r.code != 0 || !strings.Contains(r.stdout, "takes docx too") {
		t.Errorf("add another skill: %d %s %s", r.code, r.stdout, r.stderr)
	}
	cfg, err := config.Load(filepath.Join(ws, "skillsync.yaml"), skillsync.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.Sources[0]; !reflect.DeepEqual(s.Skills, []string{"pdf", "docx"}) {
		t.Errorf("skills = %v", s.Skills)
	}
	if r := run(t, ws, "remove", "team-skills", "--skill", "pdf", "--no-sync"); r.code != 0 {
		t.Errorf("remove --skill: %d %s", r.code, r.stderr)
	}
	if r := run(t, ws, "remove", "team-skills", "--skill", "docx", "--no-sync"); r.code != 2 || !strings.Contains(r.stderr, "remove the source instead") {
		t.Errorf("remove the last selected skill: %d %s", r.code, r.stderr)
	}
	if r := run(t, ws, "remove", "team-skills", "--skill", "nope", "--no-sync"); r.code != 2 {
		t.Errorf("remove an unselected skill: %d %s", r.code, r.stderr)
	}
}

// TestAddSaysWhyItsSyncFailed: a sync after add that fails beyond what
// its report lists (a target another workspace keeps) says why, as sync
// does, not only exit 1.
func TestAddSaysWhyItsSyncFailed(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	target := filepath.Join(root, "shared-target")
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	skilltest.Skill(t, filepath.Join(root, "team"), "notes", "Take notes.", nil)
	for _, ws := range []string{a, b} {
		skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "workspace: .\ntargets:\n  - dir: "+target+"\nrepositories: []\n")
	}
	if r := run(t, a, "sync"); r.code != 0 {
		t.Fatalf("sync of a: %d %s", r.code, r.stderr)
	}
	r := run(t, b, "add", filepath.Join(root, "team"))
	if r.code != 1 || !strings.Contains(r.stderr, "another target") {
		t.Errorf("add where a target is another workspace's: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}

func TestAddLocalAndErrors(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	shared := filepath.Join(ws, "shared")
	skilltest.Skill(t, shared, "notes", "Take notes.", nil)
	r := run(t, ws, "add", "./shared")
	if r.code != 0 || !strings.Contains(r.stdout, "added source shared") || !fileExists(filepath.Join(ws, ".skills-cache", "shared", "notes", "SKILL.md")) {
		t.Fatalf("add a directory: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(skilltest.ReadFile(t, filepath.Join(ws, "skillsync.yaml")), "    dir: shared\n") {
		t.Error("the directory is not written relative to the config")
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"add", "./missing"}, "is not a directory"},
		{[]string{"add", "not a source"}, "not owner/repo"},
		{[]string{"add", "./shared", "--ref", "v1"}, "local directory"},
		{[]string{"add", "acme/x@v1", "--ref", "v2"}, "contradicts"},
		{[]string{"add", "acme/x", "--agent", "nobody"}, "unknown agent"},
		{[]string{"add", "acme/x", "--global", "--config", "x.yaml"}, "-g and --config name two configs"},
		{[]string{"add", "acme/x", "--skill", "../x"}, "not a skill name"},
		{[]string{"add"}, "accepts 1 arg"},
	} {
		if r := run(t, ws, tt.args...); r.code != 2 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, %s; want 2 and %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
	if r := runEnv(t, ws, []string{"SKILLSYNC_GIT_HOST=ftp://x"}, "add", "acme/x"); r.code != 2 {
		t.Errorf("a bad git host: %d %s", r.code, r.stderr)
	}
	// A folder here named like owner/repo, a dot-folder too, is said to
	// be read as a repository.
	skilltest.Skill(t, filepath.Join(ws, ".shared", "team"), "kept", "Kept.", nil)
	if r := run(t, ws, "add", ".shared/team"); !strings.Contains(r.stderr, "write ./.shared/team for the local folder") {
		t.Errorf("add .shared/team: %d %s", r.code, r.stderr)
	}
	// A repository's .git named by its absolute path is read as file://:
	// no hint of a repository on the git host.
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/pdf", "Fill in PDF forms.")
	up.Commit("first")
	if r := run(t, ws, "add", filepath.Join(up.Dir, ".git"), "--no-sync"); r.code != 0 || strings.Contains(r.stderr, "read as a repository on") || !strings.Contains(skilltest.ReadFile(t, filepath.Join(ws, "skillsync.yaml")), "git: file://") {
		t.Errorf("add /abs/.git: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

// TestRemove removes a source: the cleanup after the sync takes its
// skills out of the cache and the target, and a folder in the target that
// skillsync did not write stays.
func TestRemove(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/pdf", "Fill in PDF forms.")
	up.Skill("skills/docx", "Edit Word documents.")
	up.Commit("first")
	ws := t.TempDir()
	if r := run(t, ws, "init", "--agent", "claude-code"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	// The built-in skills, enabled by their one commented line, are the
	// other source.
	cfgFile := filepath.Join(ws, "skillsync.yaml")
	skilltest.WriteFile(t, cfgFile, strings.Replace(skilltest.ReadFile(t, cfgFile), "  # - embedded: builtin\n", "  - embedded: builtin\n", 1))
	if r := run(t, ws, "add", up.URL(), "--name", "team"); r.code != 0 {
		t.Fatalf("add: %s", r.stderr)
	}
	target := filepath.Join(ws, ".claude", "skills")
	mine := filepath.Join(target, "mine", "SKILL.md")
	skilltest.WriteFile(t, mine, "---\nname: mine\ndescription: Mine.\n---\n")
	if !fileExists(filepath.Join(target, "pdf")) {
		t.Fatal("pdf is not in the target")
	}
	before := skilltest.ReadFile(t, filepath.Join(ws, "skillsync.yaml"))

	if r := run(t, ws, "remove", "nope"); r.code != 2 || !strings.Contains(r.stderr, "it has: builtin, team") {
		t.Errorf("remove an unknown source: %d %s", r.code, r.stderr)
	}
	r := run(t, ws, "remove", up.URL(), "--json")
	if r.code != 0 {
		t.Fatalf("remove by URL: %d %s %s", r.code, r.stdout, r.stderr)
	}
	out := decode[struct {
		Source string
		Sync   *syncJSON
	}](t, r)
	if out.Source != "team" || out.Sync == nil || len(out.Sync.Skills.Removed) != 2 {
		t.Errorf("remove = %+v", out)
	}
	for _, p := range []string{filepath.Join(target, "pdf"), filepath.Join(target, "docx"), filepath.Join(ws, ".skills-cache", "team")} {
		if fileExists(p) {
			t.Errorf("%s is still there", p)
		}
	}
	if got := skilltest.ReadFile(t, mine); !strings.Contains(got, "name: mine") {
		t.Errorf("a folder skillsync did not write was touched: %q", got)
	}
	if !fileExists(filepath.Join(target, "skillsync")) {
		t.Error("the built-in skills left the target too")
	}
	want := strings.Replace(before, "  - name: team\n    git: "+up.URL()+"\n", "", 1)
	if got := skilltest.ReadFile(t, filepath.Join(ws, "skillsync.yaml")); got != want {
		t.Errorf("remove changed more than the entry:\n%s", got)
	}

	// The last source: the cache empties without --prune-all, since the
	// user asked for exactly that.
	if r := run(t, ws, "rm", "builtin"); r.code != 0 {
		t.Fatalf("remove the last source: %d %s", r.code, r.stderr)
	}
	if fileExists(filepath.Join(ws, ".skills-cache", "builtin")) || fileExists(filepath.Join(target, "skillsync")) || !fileExists(mine) {
		t.Error("removing the last source left its skills, or took a folder skillsync did not write")
	}
	if r := run(t, t.TempDir(), "remove", "x"); r.code != 2 || !strings.Contains(r.stderr, "no config") {
		t.Errorf("remove without a config: %d %s", r.code, r.stderr)
	}
}

func TestRemoveAmbiguous(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/pdf", "Fill in PDF forms.")
	up.Commit("first")
	up.Git("branch", "dev")
	ws := t.TempDir()
	for _, a := range [][]string{{"add", up.URL(), "--name", "a", "--no-sync"}, {"add", up.URL(), "--ref", "dev", "--name", "b", "--no-sync"}} {
		if r := run(t, ws, a...); r.code != 0 {
			t.Fatalf("%v: %s", a, r.stderr)
		}
	}
	if r := run(t, ws, "remove", up.URL(), "--no-sync"); r.code != 2 || !strings.Contains(r.stderr, "names 2 sources (a, b)") {
		t.Errorf("an ambiguous remove: %d %s", r.code, r.stderr)
	}
	// URL@ref names the source at that ref, for a file URL too (issue 24).
	if r := run(t, ws, "remove", up.URL()+"@dev", "--no-sync"); r.code != 0 || !strings.Contains(r.stdout, "removed source b") {
		t.Errorf("remove URL@ref: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, ws, "remove", "a", "--no-sync"); r.code != 0 || !strings.Contains(r.stdout, "removed source a") {
		t.Errorf("remove by name: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

func TestAddFlags(t *testing.T) {
	t.Parallel()
	got, err := parse(t, newAddCommand, "acme/skills", "--name", "team", "--ref", "v1", "--path", "skills", "-s", "pdf", "--skill", "docx",
		"-a", "claude", "--agent", "codex", "--no-sync")
	want := addOptions{source: "acme/skills", name: "team", ref: "v1", path: "skills", skills: []string{"pdf", "docx"},
		agents: []string{"claude", "codex"}, noSync: true} // -g is the root's: TestGlobalWorkspace
	if err != nil || !reflect.DeepEqual(*got, want) {
		t.Errorf("add = %+v, %v", got, err)
	}
	if got, err := parse(t, newAddCommand, "acme/skills", "-l"); err != nil || !got.list {
		t.Errorf("add -l = %+v, %v", got, err)
	}
	rm, err := parse(t, newRemoveCommand, "team", "-s", "pdf", "--no-sync")
	if err != nil || *rm != (removeOptions{source: "team", skill: "pdf", noSync: true}) {
		t.Errorf("remove = %+v, %v", rm, err)
	}
	ls, err := parse(t, newLsRemoteCommand, "acme/skills", "--ref", "v2", "--path", "x")
	if err != nil || *ls != (lsRemoteOptions{source: "acme/skills", ref: "v2", path: "x"}) {
		t.Errorf("ls-remote = %+v, %v", ls, err)
	}
	n, err := parse(t, newNewCommand, "pdf", "team", "--description", "Fill forms.")
	if err != nil || *n != (newOptions{name: "pdf", dir: "team", description: "Fill forms."}) {
		t.Errorf("new = %+v, %v", n, err)
	}
	if n, err := parse(t, newNewCommand, "pdf"); err != nil || n.dir != "" { // the workspace layer, resolved when it runs
		t.Errorf("new without DIR = %+v, %v", n, err)
	}
	in, err := parse(t, newInitCommand, "-a", "*", "--gitignore")
	if err != nil || !reflect.DeepEqual(in.agents, []string{"*"}) || !in.gitignore {
		t.Errorf("init = %+v, %v", in, err)
	}
	for _, argv := range [][]string{{}, {"a", "b"}} {
		if _, err := parse(t, newAddCommand, argv...); exitCode(err) != exitUsage {
			t.Errorf("add %v: %v", argv, err)
		}
		if _, err := parse(t, newRemoveCommand, argv...); exitCode(err) != exitUsage {
			t.Errorf("remove %v: %v", argv, err)
		}
	}
	if _, err := parse(t, newNewCommand, "a", "b", "c"); exitCode(err) != exitUsage {
		t.Errorf("new with three arguments: %v", err)
	}
	if _, err := parse(t, newAgentsCommand, "x"); exitCode(err) != exitUsage {
		t.Errorf("agents with an argument: %v", err)
	}
}

// TestAddChecksFirst: a source that cannot be read, offers no skill, or
// lacks a skill --skill names is not written into the config, where every
// later sync would fail on it.
func TestAddChecksFirst(t *testing.T) {
	t.Parallel()
	team := newTeamRepo(t)
	ws := t.TempDir()
	if r := runEnv(t, ws, team.env(), "add", "acme/missing"); r.code != 1 || !strings.Contains(r.stderr, "nothing was added") {
		t.Errorf("a missing repository: %d %s", r.code, r.stderr)
	}
	if fileExists(filepath.Join(ws, "skillsync.yaml")) {
		t.Error("a failed add wrote the starter config")
	}
	if r := runEnv(t, ws, team.env(), "add", "acme/team-skills", "--skill", "pfd"); r.code != 2 || !strings.Contains(r.stderr, "offers no skill pfd (it has: docx, pdf, release-notes)") {
		t.Errorf("a skill the repository lacks: %d %s", r.code, r.stderr)
	}
	if r := runEnv(t, ws, team.env(), "add", "acme/team-skills", "--path", "nothing"); r.code != 1 || !strings.Contains(r.stderr, "nothing was added") {
		t.Errorf("a path without skills: %d %s", r.code, r.stderr)
	}
	empty := filepath.Join(ws, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := run(t, ws, "add", "./empty"); r.code != 1 || !strings.Contains(r.stderr, "offers no skill") || !strings.Contains(r.stderr, "--path names") {
		t.Errorf("an empty directory: %d %s", r.code, r.stderr)
	}
	// A folder whose one skill is invalid has a skill where discovery
	// looks: the fix is the skill, not --path.
	writeTree(t, ws, map[string]string{"broken/a/SKILL.md": "---\nname: a\n---\nNo description.\n"})
	if r := run(t, ws, "add", "./broken"); r.code != 1 || !strings.Contains(r.stderr, "offers no valid skill") || strings.Contains(r.stderr, "--path names") {
		t.Errorf("a folder whose one skill is invalid: %d %s", r.code, r.stderr)
	}
	if fileExists(filepath.Join(ws, "skillsync.yaml")) {
		t.Error("a refused add wrote the config")
	}
	if r := runEnv(t, ws, team.env(), "add", "acme/team-skills", "--skill", "PDF*", "--skill", "docx"); r.code != 0 {
		t.Errorf("a glob and a name: %d %s", r.code, r.stderr)
	}
	if r := run(t, ws, "add", "./empty", "--no-sync"); r.code != 0 {
		t.Errorf("--no-sync adds without a check: %d %s", r.code, r.stderr)
	}
}

// TestRemoveFromAConfigWithNoSources: the error names what the config
// has, and says "none" rather than leave the list empty.
func TestRemoveFromAConfigWithNoSources(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{"skillsync.yaml": "repositories: []\n"})
	if r := run(t, ws, "remove", "team"); r.code != 2 || !strings.Contains(r.stderr, "no source team in ") || !strings.HasSuffix(r.stderr, "(it has none)\n") {
		t.Errorf("remove with no sources: %d %q", r.code, r.stderr)
	}
}

// TestRemoveWhoseSyncDidNotRun: remove edits the config, then syncs. When
// that sync cannot run, the error says the skills stay until a sync; and
// remove run again (the config has lost the source, the cache has not)
// finishes the job rather than saying there is no such source.
func TestRemoveWhoseSyncDidNotRun(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/pdf", "Fill in PDF forms.")
	up.Commit("first")
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - embedded: builtin\n  - name: team\n    git: "+up.URL()+"\n")
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	lock := filepath.Join(ws, ".skills-cache", ".lock")
	if err := os.Remove(lock); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if err := os.Mkdir(lock, 0o755); err != nil { // no lock can be taken
		t.Fatal(err)
	}
	r := run(t, ws, "remove", "team")
	if r.code != 1 || !strings.Contains(r.stderr, "no longer has source team, whose skills stay in the cache and the targets until a sync: run skillsync sync") {
		t.Fatalf("remove whose sync fails: %d %s", r.code, r.stderr)
	}
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	r = run(t, ws, "remove", "team")
	if r.code != 0 || !strings.Contains(r.stdout, "has no source team; its skills are still in the cache, and this sync takes them out") {
		t.Fatalf("remove again: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if fileExists(filepath.Join(ws, ".skills-cache", "team")) {
		t.Error("the source's skills are still in the cache")
	}
	if r := run(t, ws, "remove", "team"); r.code != 2 || !strings.Contains(r.stderr, "no source team") {
		t.Errorf("remove once it is gone: %d %s", r.code, r.stderr)
	}
}

// TestRemoveSkillTypo: remove --skill of a name the source's cached skills
// do not have is refused with the nearest, and the config is left as it
// was; the right name is left out.
func TestRemoveSkillTypo(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/pdf", "Fill in PDF forms.")
	up.Skill("skills/docx", "Edit Word documents.")
	up.Commit("first")
	ws := t.TempDir()
	cfgFile := filepath.Join(ws, "skillsync.yaml")
	skilltest.WriteFile(t, cfgFile, "repositories:\n  - name: team\n    git: "+up.URL()+"\n")
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	before := skilltest.ReadFile(t, cfgFile)
	r := run(t, ws, "remove", "team", "--skill", "pdff")
	if r.code != 2 || !strings.Contains(r.stderr, "source team has no skill pdff in the cache") || !strings.Contains(r.stderr, "did you mean pdf?") {
		t.Errorf("remove --skill pdff: %d %s", r.code, r.stderr)
	}
	if got := skilltest.ReadFile(t, cfgFile); got != before {
		t.Errorf("the config changed:\n%s", got)
	}
	if r := run(t, ws, "remove", "team", "--skill", "pdf"); r.code != 0 || fileExists(filepath.Join(ws, ".skills-cache", "team", "pdf")) {
		t.Errorf("remove --skill pdf: %d %s", r.code, r.stderr)
	}
}

// TestAddBringsBackARemovedSkill: remove --skill of a source that takes
// every skill leaves the skill out with exclude:; add --skill of it takes
// it out of exclude: again, says so, and the sync places it.
func TestAddBringsBackARemovedSkill(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	shared := filepath.Join(ws, "shared")
	skilltest.Skill(t, shared, "notes", "Take notes.", nil)
	skilltest.Skill(t, shared, "pdf", "Fill in PDF forms.", nil)
	if r := run(t, ws, "add", "./shared", "--agent", "claude"); r.code != 0 {
		t.Fatalf("add: %d %s", r.code, r.stderr)
	}
	target := filepath.Join(ws, ".claude", "skills", "pdf")
	if r := run(t, ws, "remove", "shared", "--skill", "pdf"); r.code != 0 || fileExists(target) {
		t.Fatalf("remove --skill: %d %s", r.code, r.stderr)
	}
	r := run(t, ws, "add", "./shared", "--skill", "pdf")
	if r.code != 0 || !strings.Contains(r.stdout, "source shared is already there; its exclude: no longer leaves out pdf") {
		t.Errorf("add --skill again: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if cfg := skilltest.ReadFile(t, filepath.Join(ws, "skillsync.yaml")); strings.Contains(cfg, "exclude: [pdf]") {
		t.Errorf("the config still leaves pdf out:\n%s", cfg)
	}
	if !fileExists(filepath.Join(target, "SKILL.md")) {
		t.Error("pdf did not come back to the target")
	}
}

// TestAddAtAnotherRefIsRefused: add URL@ref of a repository the config
// reads without a ref wrote a second source, which cached every skill
// twice; it is refused with exit 2, naming the entry and the fix, and
// with --name it is a second source on purpose.
func TestAddAtAnotherRefIsRefused(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/pdf", "Fill in PDF forms.")
	up.Commit("first")
	ws := t.TempDir()
	if r := run(t, ws, "add", up.URL(), "--name", "shared", "--no-sync"); r.code != 0 {
		t.Fatalf("add: %d %s", r.code, r.stderr)
	}
	before := skilltest.ReadFile(t, filepath.Join(ws, "skillsync.yaml"))
	r := run(t, ws, "add", up.URL()+"@main")
	if r.code != 2 || !strings.Contains(r.stderr, "source shared is already there without a ref; to pin it, set ref: main on that entry in "+filepath.Join(ws, "skillsync.yaml")+":") || !strings.Contains(r.stderr, "skillsync remove shared first") {
		t.Errorf("add URL@main: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := skilltest.ReadFile(t, filepath.Join(ws, "skillsync.yaml")); got != before {
		t.Errorf("the refused add changed the config:\n%s", got)
	}
	if r := run(t, ws, "add", up.URL()+"@main", "--name", "pinned", "--no-sync"); r.code != 0 || !strings.Contains(r.stdout, "added source pinned") {
		t.Errorf("add URL@main --name: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

// TestAddAndRemoveJSONSayTheSyncsOutcomes: the sync that add and remove
// run says, in their --json, the exit status and outcomes sync --json
// gives, so a script learns that another source failed.
func TestAddAndRemoveJSONSayTheSyncsOutcomes(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	gone := "file://" + filepath.Join(t.TempDir(), "gone.git")
	if err := os.WriteFile(filepath.Join(ws, "skillsync.yaml"), []byte("repositories:\n  - name: gone\n    git: "+gone+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	local := t.TempDir()
	skilltest.Skill(t, local, "mine", "Mine.", nil)
	for _, args := range [][]string{{"add", local, "--json"}, {"remove", "gone", "--json"}} {
		r := run(t, ws, args...)
		out := decode[struct{ Sync *syncJSON }](t, r)
		if out.Sync == nil || out.Sync.ExitCode == nil || *out.Sync.ExitCode != r.code {
			t.Errorf("%s --json: exit %d, sync %+v", args[0], r.code, out.Sync)
		} else if args[0] == "add" && (r.code != 3 || !slices.Contains(out.Sync.Outcomes, "partial")) {
			t.Errorf("add beside a failing source: exit %d, outcomes %v; want 3, partial", r.code, out.Sync.Outcomes)
		}
	}
}
