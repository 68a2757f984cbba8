package main

// Tests of one truth on disk (what a workspace has is what its cache
// records and its lock say) as a user meets it: through the
// command line, against real git repositories and real workspaces.

import (
	"github.com/skillsync/skillsync/internal/hostenv"

	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/platform"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// entryState is what a write would change about one path: its type and
// mode, its size, its modification time and its inode.
type entryState struct {
	mode  fs.FileMode
	size  int64
	mtime time.Time
	ino   uint64
	link  string
}

// treeState records every path below root, root included, with the state
// a write changes. A missing root is an empty state.
func treeState(t *testing.T, root string) map[string]entryState {
	t.Helper()
	out := map[string]entryState{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && p == root {
				return filepath.SkipAll
			}
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		st := entryState{mode: info.Mode(), size: info.Size(), mtime: info.ModTime()}
		_, st.ino, _ = platform.FileKey(info)
		if info.Mode()&fs.ModeSymlink != 0 {
			st.link, _ = os.Readlink(p)
		}
		if info.IsDir() {
			st.size = 0 // a directory's size says nothing a reader sees
		}
		rel, _ := filepath.Rel(root, p)
		out[rel] = st
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// stateDiff lists the paths whose state differs between before and after.
func stateDiff(before, after map[string]entryState) []string {
	var diff []string
	for p, b := range before {
		a, ok := after[p]
		switch {
		case !ok:
			diff = append(diff, "removed "+p)
		case a != b:
			diff = append(diff, fmt.Sprintf("changed %s: %+v -> %+v", p, b, a))
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			diff = append(diff, "added "+p)
		}
	}
	sort.Strings(diff)
	return diff
}

// otherHome is an environment with a home of its own: no git store, no
// global layer.
func otherHome(t *testing.T) []string {
	h := t.TempDir()
	return []string{"HOME=" + h, "XDG_CACHE_HOME=" + filepath.Join(h, ".cache"), "XDG_CONFIG_HOME=" + filepath.Join(h, ".config")}
}

type listed struct {
	Name, Description, Layer, Source, Revision, State string
}

func namesOf(entries []listed) []string {
	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
	}
	return names
}

// TestReadCommandsShowWhatTheCacheHolds: after a fetch of a newer commit,
// and after another workspace sharing the git store synced it, list, show,
// read, search and prompt still show exactly what this workspace's cache
// holds; under another home, with no git store at all, every synced git
// skill is still listed and readable.
func TestReadCommandsShowWhatTheCacheHolds(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/alpha", "Alpha as first synced.")
	up.Write("skills/alpha/notes.txt", "first notes\n", 0)
	first := up.Commit("one")
	config := "repositories:\n  - name: team\n    git: " + up.URL() + "\n"
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), config)
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	up.Skill("skills/beta", "Beta, only upstream.")
	up.Write("skills/alpha/SKILL.md", skilltest.SkillMD("alpha", "Alpha as changed upstream."), 0)
	up.Write("skills/alpha/notes.txt", "second notes\n", 0)
	second := up.Commit("two")

	check := func(when string, env []string) {
		t.Helper()
		r := runEnv(t, ws, env, "list", "--json")
		got := decode[[]listed](t, r)
		if r.code != 0 || !slices.Equal(namesOf(got), []string{"alpha"}) || got[0].Revision != first || got[0].Description != "Alpha as first synced." {
			t.Errorf("%s: list = %d %+v\n%s", when, r.code, got, r.stderr)
		}
		if strings.Contains(r.stderr, "not synced") || strings.Contains(r.stderr, "not fetched") {
			t.Errorf("%s: list says the synced source is missing:\n%s", when, r.stderr)
		}
		p := runEnv(t, ws, env, "prompt")
		loc := "<location>\n" + filepath.Join(ws, ".skills-cache", "team", "alpha", "SKILL.md") + "\n</location>"
		if p.code != 0 || !strings.Contains(p.stdout, loc) || strings.Contains(p.stdout, "beta") || strings.Contains(p.stdout, "changed upstream") {
			t.Errorf("%s: prompt does not show the cache:\n%s%s", when, p.stdout, p.stderr)
		}
		if n, m := strings.Count(p.stdout, "<skill>"), strings.Count(p.stdout, "<location>"); n != 1 || m != n {
			t.Errorf("%s: prompt has %d skills and %d locations:\n%s", when, n, m, p.stdout)
		}
		show := decode[struct{ Revision, Description, Location string }](t, runEnv(t, ws, env, "show", "--json", "alpha"))
		if show.Revision != first || show.Description != "Alpha as first synced." || show.Location != filepath.Join(ws, ".skills-cache", "team", "alpha", "SKILL.md") {
			t.Errorf("%s: show alpha = %+v", when, show)
		}
		if r := runEnv(t, ws, env, "show", "beta"); r.code != 1 {
			t.Errorf("%s: show of a skill not on disk exits %d: %s", when, r.code, r.stdout)
		}
		if r := runEnv(t, ws, env, "read", "alpha", "notes.txt"); r.code != 0 || r.stdout != "first notes\n" {
			t.Errorf("%s: read alpha notes.txt = %d %q %s", when, r.code, r.stdout, r.stderr)
		}
		if r := runEnv(t, ws, env, "read", "alpha"); r.code != 0 || !strings.Contains(r.stdout, "Alpha as first synced.") {
			t.Errorf("%s: read alpha = %d %q %s", when, r.code, r.stdout, r.stderr)
		}
		if r := runEnv(t, ws, env, "search", "--json", "beta"); strings.Contains(r.stdout, `"beta"`) {
			t.Errorf("%s: search finds a skill not on disk:\n%s", when, r.stdout)
		}
		if r := runEnv(t, ws, env, "search", "--json", "alpha"); !strings.Contains(r.stdout, `"alpha"`) {
			t.Errorf("%s: search lacks alpha:\n%s%s", when, r.stdout, r.stderr)
		}
	}

	fetched := decode[[]struct{ Revision string }](t, run(t, ws, "fetch", "--json"))
	if len(fetched) != 1 || fetched[0].Revision != second {
		t.Fatalf("fetch = %+v", fetched)
	}
	check("after a fetch", nil)

	// Another workspace on the same machine syncs the newer commit from
	// the shared store.
	ws2 := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws2, "skillsync.yaml"), config)
	if r := run(t, ws2, "sync"); r.code != 0 {
		t.Fatalf("sync of the second workspace: %d %s", r.code, r.stderr)
	}
	if got := decode[[]listed](t, run(t, ws2, "list", "--json")); !slices.Equal(namesOf(got), []string{"alpha", "beta"}) {
		t.Fatalf("the second workspace did not get the newer commit: %+v", got)
	}
	check("after another workspace synced", nil)

	// Another home: no git store at all, and the remote gone too.
	env := otherHome(t)
	if err := os.RemoveAll(up.Dir); err != nil {
		t.Fatal(err)
	}
	check("under another home", env)
	home := strings.TrimPrefix(env[0], "HOME=")
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Errorf("read commands wrote into the other home: %v", entries)
	}
}

// TestNeverSyncedSourceIsOneProblem: a source added to the config since
// the last sync is one problem line; the other sources and layers work.
func TestNeverSyncedSourceIsOneProblem(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/later", "Not synced yet.")
	up.Commit("one")
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "team", "shared", "SKILL.md"), skilltest.SkillMD("shared", "From the team folder."))
	skilltest.WriteFile(t, filepath.Join(ws, "skills", "mine", "SKILL.md"), skilltest.SkillMD("mine", "The workspace's own."))
	config := "repositories:\n  - name: team\n    dir: team\n"
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), config)
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), config+"  - name: late\n    git: "+up.URL()+"\n")

	r := run(t, ws, "list", "--json")
	if names := namesOf(decode[[]listed](t, r)); r.code != 0 || !slices.Equal(names, []string{"mine", "shared"}) {
		t.Errorf("list = %d %v", r.code, names)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "source late is not synced yet: run skillsync sync") {
		t.Errorf("list stderr, want one line saying late is not synced yet:\n%s", r.stderr)
	}
	if p := run(t, ws, "prompt"); p.code != 0 || !strings.Contains(p.stdout, "shared") || !strings.Contains(p.stdout, "mine") || strings.Contains(p.stdout, "later") {
		t.Errorf("prompt: %d\n%s%s", p.code, p.stdout, p.stderr)
	}
	if r := run(t, ws, "read", "shared"); r.code != 0 || !strings.Contains(r.stdout, "From the team folder.") {
		t.Errorf("read shared: %d %s", r.code, r.stderr)
	}
	if r := run(t, ws, "read", "later"); r.code != 1 {
		t.Errorf("read of a skill of the unsynced source: %d %q", r.code, r.stdout)
	}
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	if r := run(t, ws, "list"); strings.Contains(r.stderr, "not synced") || !strings.Contains(r.stdout, "later") {
		t.Errorf("after a sync: %s%s", r.stdout, r.stderr)
	}
}

// readCommands are the commands that must write nothing, with the
// arguments that reach every branch a workspace has.
var readCommands = [][]string{
	{"list"}, {"list", "--json"}, {"list", "--all", "--json"},
	{"show", "pdf"}, {"show", "--json", "release-notes"}, {"show", "hidden-one"}, {"show", "nope"},
	{"read", "pdf"}, {"read", "release-notes", "scripts/draft.sh"}, {"read", "hidden-one"}, {"read", "nope"},
	{"search", "pdf"}, {"search", "--json", "--all", "release notes"},
	{"prompt"}, {"prompt", "--format", "json"}, {"prompt", "--exclude-stale", "--max-chars", "200"},
	{"verify"}, {"audit"}, {"validate", "skills"},
	{"show", "skillsync"}, {"read", "skillsync"},
}

// TestReadCommandsWriteNothing runs every read command in an empty
// directory and in a synced workspace (with a target, usage recorded, and
// a version-1 usage file) and sees no path below them, nor in the home,
// created, removed or touched.
func TestReadCommandsWriteNothing(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, dir string) {
		t.Helper()
		roots := []string{dir, home(t)}
		var before []map[string]entryState
		for _, root := range roots {
			before = append(before, treeState(t, root))
		}
		for _, args := range readCommands {
			r := run(t, dir, args...)
			if r.code > 1 {
				t.Errorf("%v exits %d: %s", args, r.code, r.stderr)
			}
			for i, root := range roots {
				if diff := stateDiff(before[i], treeState(t, root)); len(diff) > 0 {
					t.Errorf("%v wrote below %s:\n  %s", args, root, strings.Join(diff, "\n  "))
					before[i] = treeState(t, root)
				}
			}
		}
	}
	t.Run("empty directory", func(t *testing.T) {
		check(t, t.TempDir())
	})
	t.Run("synced workspace", func(t *testing.T) {
		ws := workspace(t)
		cfg, _ := os.ReadFile(filepath.Join(ws, "skillsync.yaml"))
		skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), string(cfg)+"targets:\n  - dir: .claude/skills\n")
		if r := run(t, ws, "sync"); r.code != 0 {
			t.Fatalf("sync: %s", r.stderr)
		}
		if r := run(t, ws, "use", "release-notes"); r.code != 0 {
			t.Fatalf("use: %s", r.stderr)
		}
		// A skill new since the sync: its first sighting is for the next
		// sync to record, not for a read command.
		skilltest.WriteFile(t, filepath.Join(ws, "skills", "fresh", "SKILL.md"), skilltest.SkillMD("fresh", "Added after the sync."))
		check(t, ws)
	})
	t.Run("version-1 usage file", func(t *testing.T) {
		ws := workspace(t)
		skilltest.WriteFile(t, filepath.Join(ws, "skills", ".usage.json"), `{"version":1,"skills":{"pdf":{"use_count":3,"state":"active"}}}`)
		check(t, ws)
	})
}

// inodeState maps every file below root to its inode and mtime.
func inodeState(t *testing.T, root string) map[string]entryState {
	t.Helper()
	out := map[string]entryState{}
	for p, st := range treeState(t, root) {
		if st.mode.IsRegular() {
			out[p] = entryState{ino: st.ino, mtime: st.mtime, size: st.size}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no files below %s", root)
	}
	return out
}

// dirNames lists the entries of dir that do not start with ".".
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names
}

// TestConfigChangeIsAChange: changing path:, skills: or exclude: of one
// git source re-materializes that source, and only that one, in the cache
// and the target; verify is clean after each change.
func TestConfigChangeIsAChange(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	for _, p := range []string{"skills/.system/sys-a", "skills/.system/sys-b", "skills/.experimental/exp-c", "skills/.experimental/exp-d"} {
		up.Skill(p, "Skill "+filepath.Base(p)+".")
	}
	up.Commit("sets")
	other := gittest.NewRepo(t, "main")
	other.Skill("skills/other-one", "From the other source.")
	other.Write("skills/other-one/run.sh", "#!/bin/sh\n", 0o755)
	other.Commit("other")
	ws := t.TempDir()
	cache, target := filepath.Join(ws, ".skills-cache"), filepath.Join(ws, ".claude", "skills")
	configWith := func(selection string) {
		skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: other\n    git: "+other.URL()+
			"\n  - name: openai\n    git: "+up.URL()+"\n"+selection+"targets:\n  - dir: .claude/skills\n")
	}
	configWith("    path: skills/.system\n")
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	if got := dirNames(t, filepath.Join(cache, "openai")); !slices.Equal(got, []string{"sys-a", "sys-b"}) {
		t.Fatalf("cache holds %v after the first sync", got)
	}
	otherCache, otherTarget := inodeState(t, filepath.Join(cache, "other")), inodeState(t, filepath.Join(target, "other-one"))

	for _, step := range []struct {
		selection string
		want      []string
	}{
		{"    path: skills/.experimental\n", []string{"exp-c", "exp-d"}},
		{"    path: skills/.experimental\n    exclude: [exp-d]\n", []string{"exp-c"}},
		{"    path: skills/.experimental\n    skills: [exp-d]\n", []string{"exp-d"}},
		{"    path: skills/.system\n    skills: [sys-*]\n    exclude: [sys-b]\n", []string{"sys-a"}},
	} {
		configWith(step.selection)
		js := decode[syncJSON](t, run(t, ws, "sync", "--json"))
		status := map[string]string{}
		for _, s := range js.Sources {
			status[s.Source] = s.Status
		}
		if status["openai"] != "updated" || status["other"] != "unchanged" {
			t.Errorf("%q: statuses %v, want openai updated and other unchanged", step.selection, status)
		}
		if got := dirNames(t, filepath.Join(cache, "openai")); !slices.Equal(got, step.want) {
			t.Errorf("%q: cache holds %v, want %v", step.selection, got, step.want)
		}
		all := slices.Sorted(slices.Values(append(slices.Clone(step.want), "other-one")))
		if got := dirNames(t, target); !slices.Equal(got, all) {
			t.Errorf("%q: target holds %v", step.selection, got)
		}
		if got := namesOf(decode[[]listed](t, run(t, ws, "list", "--json"))); !slices.Equal(got, all) {
			t.Errorf("%q: list = %v", step.selection, got)
		}
		if diff := stateDiff(otherCache, inodeState(t, filepath.Join(cache, "other"))); len(diff) > 0 {
			t.Errorf("%q: the other source's cache was rewritten:\n  %s", step.selection, strings.Join(diff, "\n  "))
		}
		if diff := stateDiff(otherTarget, inodeState(t, filepath.Join(target, "other-one"))); len(diff) > 0 {
			t.Errorf("%q: the other source's target copy was rewritten:\n  %s", step.selection, strings.Join(diff, "\n  "))
		}
		if r := run(t, ws, "verify"); r.code != 0 || r.stdout != "" {
			t.Errorf("%q: verify: %d\n%s%s", step.selection, r.code, r.stdout, r.stderr)
		}
		if r := run(t, ws, "sync", "--json"); !strings.Contains(r.stdout, `"written": 0`) || strings.Contains(r.stdout, `"status": "updated"`) {
			t.Errorf("%q: a second sync did work:\n%s", step.selection, r.stdout)
		}
	}
}

// TestEmptySourceSaysSo: a source that yields no skill is reported on
// stderr and in --json, as the problem rule source-empty.
func TestEmptySourceSaysSo(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Write("README.md", "Skills live elsewhere.\n", 0)
	up.Write("docs/guide.md", "# Guide\n", 0)
	up.Commit("no skills")
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - embedded: builtin\n  - name: bare\n    git: "+up.URL()+"\n")
	r := run(t, ws, "sync")
	if r.code != 0 || !strings.Contains(r.stderr, "bare: warning: source bare yields no skills") || !strings.Contains(r.stderr, "(source-empty)") {
		t.Errorf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "builtin yields no skills") {
		t.Errorf("a source with skills is called empty:\n%s", r.stderr)
	}
	js := decode[syncJSON](t, run(t, ws, "sync", "--json"))
	var rules []string
	for _, p := range js.Problems {
		rules = append(rules, p.Source+":"+p.Rule)
	}
	if !slices.Equal(rules, []string{"bare:source-empty"}) {
		t.Errorf("--json problems = %v, want bare:source-empty on an unchanged sync too", rules)
	}
}

// TestGitSourceLaidOutAsOpenAISkills: a git source that keeps its skills
// in skills/.curated, skills/.experimental and skills/.system, as
// openai/skills does, yields them without a path:, as the same folder
// given as a dir: source does.
func TestGitSourceLaidOutAsOpenAISkills(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	for _, p := range []string{"skills/.curated/cur-a", "skills/.experimental/exp-b", "skills/.system/sys-c"} {
		up.Skill(p, "Skill "+filepath.Base(p)+".")
	}
	up.Commit("sets")
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: openai\n    git: "+up.URL()+"\n  - name: local\n    dir: "+up.Dir+"\n")
	js := decode[syncJSON](t, run(t, ws, "sync", "--json"))
	skills := map[string]int{}
	for _, s := range js.Sources {
		skills[s.Source] = s.Skills
	}
	if skills["openai"] != 3 || skills["local"] != 3 {
		t.Errorf("skills per source = %v, want 3 each; problems: %+v", skills, js.Problems)
	}
}

type preservedJSON struct {
	Targets []struct {
		Dir       string
		Preserved []string
	}
}

// TestEditedTargetCopyIsPreserved: a copy in a target that the user
// edited is moved to <target>/.skillsync-conflicts/<name>-<stamp>/ before
// a new version replaces it or its skill leaves, with a warning on stderr
// and the path in --json targets[].preserved; an edit with nothing new to
// write stays where it is.
func TestEditedTargetCopyIsPreserved(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	team := filepath.Join(ws, "team")
	skilltest.WriteFile(t, filepath.Join(team, "notes", "SKILL.md"), skilltest.SkillMD("notes", "Version one."))
	skilltest.WriteFile(t, filepath.Join(team, "gone", "SKILL.md"), skilltest.SkillMD("gone", "Leaves the source."))
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: team\n    dir: team\ntargets:\n  - dir: .claude/skills\n")
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	target := filepath.Join(ws, ".claude", "skills")
	edited := "---\nname: notes\ndescription: Version one.\n---\n# notes\nMy own line.\n"
	skilltest.WriteFile(t, filepath.Join(target, "notes", "SKILL.md"), edited)
	skilltest.WriteFile(t, filepath.Join(target, "notes", "mine.txt"), "added by me\n")

	// Nothing new upstream: nothing is rewritten, so the edit stays where
	// it is (a sync with nothing new reads no target file).
	r := run(t, ws, "sync")
	if r.code != 0 || strings.Contains(r.stderr, "was edited") {
		t.Errorf("sync over an edit with nothing new: %d\n%s", r.code, r.stderr)
	}
	if data, _ := os.ReadFile(filepath.Join(target, "notes", "SKILL.md")); string(data) != edited {
		t.Errorf("an edit with nothing new to write was touched: %q", data)
	}
	if asides, _ := filepath.Glob(filepath.Join(target, ".skillsync-conflicts", "*")); len(asides) != 0 {
		t.Errorf("a conflicts folder with nothing new: %v", asides)
	}

	// A new version: the edit is moved aside, the new version written.
	skilltest.WriteFile(t, filepath.Join(team, "notes", "SKILL.md"), skilltest.SkillMD("notes", "Version two."))
	r = run(t, ws, "sync")
	if r.code != 0 || !strings.Contains(r.stderr, "warning: a copy in "+target+" was edited: it was moved to "+filepath.Join(target, ".skillsync-conflicts", "notes-")) {
		t.Errorf("sync over an edit: %d\n%s", r.code, r.stderr)
	}
	asides, _ := filepath.Glob(filepath.Join(target, ".skillsync-conflicts", "notes-*"))
	if len(asides) != 1 {
		t.Fatalf("conflicts folder holds %v", asides)
	}
	if !stampedName(filepath.Base(asides[0])) {
		t.Errorf("the edited copy's folder is %s, want notes-YYYYMMDDTHHMMSSZ", filepath.Base(asides[0]))
	}
	if data, _ := os.ReadFile(filepath.Join(asides[0], "SKILL.md")); string(data) != edited {
		t.Errorf("the edited SKILL.md was not kept: %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(asides[0], "mine.txt")); string(data) != "added by me\n" {
		t.Errorf("the user's added file was not kept: %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(target, "notes", "SKILL.md")); !strings.Contains(string(data), "Version two.") {
		t.Errorf("the new version was not written: %q", data)
	}
	if _, err := os.Lstat(filepath.Join(target, "notes", "mine.txt")); err == nil {
		t.Error("the new version carries the user's file")
	}

	// The skill leaves the source while its copy is edited: kept aside,
	// reported in --json.
	skilltest.WriteFile(t, filepath.Join(target, "gone", "SKILL.md"), skilltest.SkillMD("gone", "Edited before it left."))
	if err := os.RemoveAll(filepath.Join(team, "gone")); err != nil {
		t.Fatal(err)
	}
	r = run(t, ws, "sync", "--json")
	js := decode[preservedJSON](t, r)
	if len(js.Targets) != 1 || len(js.Targets[0].Preserved) != 1 || !strings.HasPrefix(js.Targets[0].Preserved[0], filepath.Join(target, ".skillsync-conflicts", "gone-")) {
		t.Fatalf("--json targets = %+v\n%s", js.Targets, r.stderr)
	}
	if data, _ := os.ReadFile(filepath.Join(js.Targets[0].Preserved[0], "SKILL.md")); !strings.Contains(string(data), "Edited before it left.") {
		t.Errorf("the edited copy of a removed skill was not kept: %q", data)
	}
	if !strings.Contains(r.stderr, "was edited") {
		t.Errorf("no warning with --json:\n%s", r.stderr)
	}
	if _, err := os.Lstat(filepath.Join(target, "gone")); err == nil {
		t.Error("the removed skill is still in the target")
	}
	if r := run(t, ws, "verify"); r.code != 0 {
		t.Errorf("verify: %d %s", r.code, r.stdout)
	}
}

// stampedName reports whether base is NAME-YYYYMMDDTHHMMSSZ, with an
// optional -N after it.
func stampedName(base string) bool {
	_, stamp, ok := strings.Cut(base, "-")
	if !ok {
		return false
	}
	_, err := time.Parse("20060102T150405Z", strings.SplitN(stamp, "-", 2)[0])
	return err == nil
}

// TestUsagePerCopyThroughTheCLI: alice's use of pdf counts for her copy;
// archiving it leaves the workspace's pdf the active winner for everyone
// and team/pdf in the cache, also after the next sync.
func TestUsagePerCopyThroughTheCLI(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	cfg, _ := os.ReadFile(filepath.Join(ws, "skillsync.yaml"))
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), string(cfg)+"targets:\n  - dir: .claude/skills\n")
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %s", r.stderr)
	}
	if r := run(t, ws, "use", "pdf"); r.code != 0 || !strings.Contains(r.stderr, "recorded a use of pdf") {
		t.Fatalf("use pdf: %d %s", r.code, r.stderr)
	}
	var usage struct {
		Version int
		Skills  map[string]struct {
			UseCount int `json:"use_count"`
			State    string
		}
	}
	data, err := os.ReadFile(filepath.Join(ws, "skills", ".usage.json"))
	if err != nil || json.Unmarshal(data, &usage) != nil || usage.Version != 2 || usage.Skills["user:alice/pdf"].UseCount != 1 {
		t.Fatalf("usage after use pdf: %v %s", err, data)
	}
	if _, ok := usage.Skills["workspace/pdf"]; ok && usage.Skills["workspace/pdf"].UseCount != 0 {
		t.Errorf("alice's use counted for the workspace copy: %s", data)
	}
	// 100 days on every winner is idle and archived, alice's pdf among
	// them; the copies it shadowed are not winners and stay.
	later := time.Now().UTC().Add(100 * 24 * time.Hour)
	if r := run(t, ws, "curate", "--force", "--now", later.Format(time.RFC3339)); r.code != 0 || !strings.Contains(r.stdout, "pdf: active -> archived") {
		t.Fatalf("curate: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	archived, _ := filepath.Glob(filepath.Join(ws, "alice", "skills", ".archive", "pdf-*"))
	if len(archived) != 1 {
		t.Fatalf("alice's archive holds %v", archived)
	}
	for _, when := range []string{"after curate", "after the next sync"} {
		list := decode[[]listed](t, run(t, ws, "list", "--json"))
		var pdf *listed
		for i := range list {
			if list[i].Name == "pdf" {
				pdf = &list[i]
			}
		}
		if pdf == nil || pdf.Layer != "workspace" || pdf.State != "active" {
			t.Errorf("%s: pdf = %+v, want the workspace's copy, active", when, pdf)
		}
		if r := run(t, ws, "prompt"); !strings.Contains(r.stdout, filepath.Join(ws, "skills", "pdf", "SKILL.md")) {
			t.Errorf("%s: the workspace pdf is not in the prompt", when)
		}
		if r := run(t, ws, "search", "--json", "pdf"); !strings.Contains(r.stdout, `"pdf"`) {
			t.Errorf("%s: search lacks pdf: %s", when, r.stdout)
		}
		if _, err := os.Stat(filepath.Join(ws, ".skills-cache", "team", "pdf", "SKILL.md")); err != nil {
			t.Errorf("%s: team/pdf left the cache: %v", when, err)
		}
		if data, _ := os.ReadFile(filepath.Join(ws, ".claude", "skills", "pdf", "SKILL.md")); string(data) == "" {
			t.Errorf("%s: the target has no pdf", when)
		}
		if r := run(t, ws, "sync"); r.code != 0 {
			t.Fatalf("sync: %s", r.stderr)
		}
	}
	want, _ := os.ReadFile(filepath.Join(ws, "skills", "pdf", "SKILL.md"))
	if got, _ := os.ReadFile(filepath.Join(ws, ".claude", "skills", "pdf", "SKILL.md")); string(got) != string(want) {
		t.Errorf("the target's pdf is not the workspace's: %q", got)
	}
}

// TestUsageVersion1IsMigratedOnce: a version-1 usage file is migrated by
// the first command that records something, its counts going to the copy
// that wins now; the old file is kept once as .usage.json.v1 and never
// replaced by later commands.
func TestUsageVersion1IsMigratedOnce(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	v1 := `{"version":1,"skills":{"pdf":{"use_count":5,"view_count":2,"state":"active"},"release-notes":{"use_count":1,"state":"active"}}}`
	usage := filepath.Join(ws, "skills", ".usage.json")
	skilltest.WriteFile(t, usage, v1)
	if r := run(t, ws, "use", "manual"); r.code != 0 || !strings.Contains(r.stderr, "version 1") {
		t.Fatalf("use: %d %s", r.code, r.stderr)
	}
	if r := run(t, ws, "use", "pdf"); r.code != 0 {
		t.Fatalf("use: %d %s", r.code, r.stderr)
	}
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	kept, _ := filepath.Glob(usage + ".*")
	kept = slices.DeleteFunc(kept, func(p string) bool { return p == usage+".lock" })
	if len(kept) != 1 || kept[0] != usage+".v1" {
		t.Errorf("kept copies = %v, want only .usage.json.v1", kept)
	}
	if data, _ := os.ReadFile(usage + ".v1"); string(data) != v1 {
		t.Errorf(".usage.json.v1 = %q, want the version-1 file as it was", data)
	}
	var u struct {
		Version int
		Skills  map[string]struct {
			UseCount  int `json:"use_count"`
			ViewCount int `json:"view_count"`
		}
	}
	data, _ := os.ReadFile(usage)
	if err := json.Unmarshal(data, &u); err != nil {
		t.Fatal(err)
	}
	if u.Version != 2 || u.Skills["user:alice/pdf"].UseCount != 6 || u.Skills["user:alice/pdf"].ViewCount != 2 ||
		u.Skills["marketplace:team/release-notes"].UseCount != 1 || u.Skills["global/manual"].UseCount != 1 {
		t.Errorf("migrated usage:\n%s", data)
	}
	if _, ok := u.Skills["pdf"]; ok {
		t.Errorf("a bare name is left in version 2:\n%s", data)
	}
}

// TestUseReactivatesAStaleSkill: use of a skill the curator marked stale
// makes it active at once, with a reactivated event in the audit log.
func TestUseReactivatesAStaleSkill(t *testing.T) {
	t.Parallel()
	ws := staleWorkspace(t)
	if r := run(t, ws, "list"); !strings.Contains(r.stdout, "skillsync (stale)") {
		t.Fatalf("not stale after curate:\n%s", r.stdout)
	}
	if r := run(t, ws, "use", "skillsync"); r.code != 0 {
		t.Fatalf("use: %d %s", r.code, r.stderr)
	}
	if r := run(t, ws, "list"); strings.Contains(r.stdout, "skillsync (stale)") || !strings.Contains(r.stdout, "writing-skills (stale)") {
		t.Errorf("after use, without a curate:\n%s", r.stdout)
	}
	r := run(t, ws, "audit", "--json", "--op", "reactivated")
	if r.code != 0 || !strings.Contains(r.stdout, `"op": "reactivated"`) || !strings.Contains(r.stdout, "skillsync") || strings.Contains(r.stdout, "writing-skills") {
		t.Errorf("audit --op reactivated: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestHiddenSkillsAreRefused: read and use refuse a hidden: skill, naming
// the config that hides it, and record nothing.
func TestHiddenSkillsAreRefused(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	cfg := filepath.Join(ws, "skillsync.yaml")
	for _, args := range [][]string{{"read", "hidden-one"}, {"read", "HIDDEN-ONE", "SKILL.md"}, {"use", "hidden-one"}, {"use", "--view", "hidden-one"}} {
		r := run(t, ws, args...)
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "skill hidden-one is hidden by "+cfg+" (hidden:)") {
			t.Errorf("%v: %d %q\n%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if data, err := os.ReadFile(filepath.Join(ws, "skills", ".usage.json")); err == nil {
		var u struct {
			Skills map[string]map[string]any
		}
		if err := json.Unmarshal(data, &u); err != nil {
			t.Fatal(err)
		}
		for copy, rec := range u.Skills {
			if strings.HasSuffix(copy, "/hidden-one") && (rec["use_count"] != 0.0 || rec["view_count"] != 0.0 || rec["last_used_at"] != nil) {
				t.Errorf("a use of a hidden skill was recorded: %s %v", copy, rec)
			}
		}
	}
	if r := run(t, ws, "show", "hidden-one"); r.code != 0 {
		t.Errorf("show of a hidden skill: %d %s", r.code, r.stderr)
	}
}

// TestShowKeepsAllowedToolsAsWritten: allowed-tools splits only on
// top-level spaces, so a tool with spaces inside its parentheses is one.
func TestShowKeepsAllowedToolsAsWritten(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skills", "commit", "SKILL.md"),
		"---\nname: commit\ndescription: Commits.\nallowed-tools: Bash(git add:*) Bash(npm run test:*) Read\n---\n")
	skilltest.WriteFile(t, filepath.Join(ws, "skills", "listed", "SKILL.md"),
		"---\nname: listed\ndescription: Commas.\nallowed-tools: Read, Grep, Bash(ls -la)\n---\n")
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories: []\n")
	for name, want := range map[string][]string{
		"commit": {"Bash(git add:*)", "Bash(npm run test:*)", "Read"},
		"listed": {"Read", "Grep", "Bash(ls -la)"},
	} {
		got := decode[struct {
			AllowedTools []string `json:"allowed_tools"`
		}](t, run(t, ws, "show", "--json", name))
		if !slices.Equal(got.AllowedTools, want) {
			t.Errorf("show --json %s: allowed_tools = %q, want %q", name, got.AllowedTools, want)
		}
	}
	if r := run(t, ws, "show", "commit"); !strings.Contains(r.stdout, "Bash(git add:*) Bash(npm run test:*) Read") {
		t.Errorf("show commit:\n%s", r.stdout)
	}
}

// TestValidateWithoutAnySkill: validate of a folder holding no SKILL.md
// exits 1 and says so, as the reference validator does.
func TestValidateWithoutAnySkill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(dir, "docs", "README.md"), "# not a skill\n")
	for _, args := range [][]string{{"validate", dir}, {"validate", "--json", dir}} {
		r := run(t, dir, args...)
		if r.code != 1 || !strings.Contains(r.stdout, "validate "+dir+": no skill found") {
			t.Errorf("%v: %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	skilltest.WriteFile(t, filepath.Join(dir, "docs", "one", "SKILL.md"), skilltest.SkillMD("one", "Now there is one."))
	if r := run(t, dir, "validate", dir); r.code != 0 {
		t.Errorf("with one valid skill: %d %s", r.code, r.stderr)
	}
	// A path that cannot be checked is one result; the others are checked
	// all the same.
	bad := filepath.Join(t.TempDir(), "bad")
	skilltest.WriteFile(t, filepath.Join(bad, "SKILL.md"), "no frontmatter\n")
	missing := filepath.Join(dir, "missing")
	r := run(t, dir, "validate", "--json", missing, bad)
	var out []struct {
		Path  string
		Valid bool
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); r.code != 1 || err != nil || len(out) != 2 || out[0].Path != missing || out[0].Valid || out[1].Valid {
		t.Errorf("validate of a missing and a bad path: %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
}

// runTo is run with stdout going to out, a real file.
func runTo(t *testing.T, dir string, out *os.File, args ...string) result {
	t.Helper()
	var errb strings.Builder
	code := execute(factory{env: hostenv.New(dir, environ(t, nil)), stdin: strings.NewReader(""), stdout: out, stderr: &errb}, args)
	return result{"", errb.String(), code}
}

// drain reads what is waiting on f, giving up after a short while.
func drain(f *os.File) string {
	var got []byte
	buf := make([]byte, 4096)
	for {
		_ = f.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		n, err := f.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			return string(got)
		}
	}
}

// TestReadBinaryToATerminal: read refuses to print a binary file to a
// terminal and names --raw; --raw prints it; to a pipe the bytes go out
// as they are; a text file goes to the terminal.
func TestReadBinaryToATerminal(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	binary := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01\xff\xfe"
	skilltest.WriteFile(t, filepath.Join(ws, "skills", "logo", "SKILL.md"), skilltest.SkillMD("logo", "Has a picture."))
	skilltest.WriteFile(t, filepath.Join(ws, "skills", "logo", "assets", "logo.png"), binary)
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories: []\n")
	master, slave := openPTY(t)
	if !isTerminal(slave) {
		t.Fatal("the pseudo-terminal is not taken for a terminal")
	}

	r := runTo(t, ws, slave, "read", "logo", "assets/logo.png")
	if r.code != 1 || !strings.Contains(r.stderr, "--raw") || !strings.Contains(r.stderr, "binary") {
		t.Errorf("binary to a terminal: %d %s", r.code, r.stderr)
	}
	if got := drain(master); got != "" {
		t.Errorf("the refused binary reached the terminal: %q", got)
	}
	if r := runTo(t, ws, slave, "read", "--raw", "logo", "assets/logo.png"); r.code != 0 {
		t.Errorf("--raw: %d %s", r.code, r.stderr)
	}
	if got := drain(master); !strings.Contains(got, "IHDR") {
		t.Errorf("--raw did not print the file: %q", got)
	}
	if r := runTo(t, ws, slave, "read", "logo"); r.code != 0 {
		t.Errorf("text to a terminal: %d %s", r.code, r.stderr)
	}
	if got := drain(master); !strings.Contains(got, "Has a picture.") {
		t.Errorf("SKILL.md did not reach the terminal: %q", got)
	}

	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan string)
	go func() {
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := pr.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				done <- b.String()
				return
			}
		}
	}()
	r = runTo(t, ws, pw, "read", "logo", "assets/logo.png")
	pw.Close()
	if got := <-done; r.code != 0 || got != binary {
		t.Errorf("binary to a pipe: %d %q %s", r.code, got, r.stderr)
	}
}

// TestSyncSummarizesShadowedAndDuplicateNames: names shadowed across
// sources and names a source has twice get one summary line from sync;
// the details are in --json and show.
func TestSyncSummarizesShadowedAndDuplicateNames(t *testing.T) {
	t.Parallel()
	newWorkspace := func() string {
		ws := t.TempDir()
		skilltest.WriteFile(t, filepath.Join(ws, "low", "common", "SKILL.md"), skilltest.SkillMD("common", "The lower source's."))
		skilltest.WriteFile(t, filepath.Join(ws, "high", "common", "SKILL.md"), skilltest.SkillMD("common", "The higher source's."))
		skilltest.WriteFile(t, filepath.Join(ws, "high", "a", "twice", "SKILL.md"), skilltest.SkillMD("twice", "First by path."))
		skilltest.WriteFile(t, filepath.Join(ws, "high", "b", "twice", "SKILL.md"), skilltest.SkillMD("twice", "Second by path."))
		skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: low\n    dir: low\n  - name: high\n    dir: high\n")
		return ws
	}
	ws := newWorkspace()
	r := run(t, ws, "sync")
	want := "names: 1 shadowed by a higher source, 1 duplicate inside a source (skillsync show NAME says which won)\n"
	if r.code != 0 || strings.Count(r.stdout, "names: ") != 1 || !strings.Contains(r.stdout, want) {
		t.Errorf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, ws, "show", "common"); !strings.Contains(r.stdout, "low") {
		t.Errorf("show common does not name the shadowed copy:\n%s", r.stdout)
	}
	if r := run(t, ws, "read", "twice"); !strings.Contains(r.stdout, "First by path.") {
		t.Errorf("the duplicate that sorts first did not win: %s", r.stdout)
	}
	js := decode[struct{ Shadowed, Duplicates []string }](t, run(t, newWorkspace(), "sync", "--json"))
	if !slices.Equal(js.Shadowed, []string{"common"}) || !slices.Equal(js.Duplicates, []string{"high/twice"}) {
		t.Errorf("--json: %+v", js)
	}
}

// TestInitGitignoreIsIdempotent: init --gitignore appends the three lines
// for machine-local files once, keeps what .gitignore had, and adds
// nothing on a second run.
func TestInitGitignoreIsIdempotent(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	ignore := filepath.Join(ws, ".gitignore")
	if err := os.WriteFile(ignore, []byte("node_modules/\n/skills/.audit/"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, ws, "init", "--gitignore"); r.code != 0 {
		t.Fatalf("init --gitignore: %d %s", r.code, r.stderr)
	}
	for _, args := range [][]string{{"init", "--force", "--gitignore"}, {"init", "--gitignore", "--agent", "claude"}, {"init", "--gitignore", "--agent", "claude"}} {
		if r := run(t, ws, args...); r.code != 0 && !strings.Contains(r.stderr, "already") {
			t.Fatalf("%v: %d %s", args, r.code, r.stderr)
		}
	}
	data, _ := os.ReadFile(ignore)
	for _, line := range []string{"/.skills-cache/", "/skills/.usage.json*", "/skills/.audit/", "node_modules/"} {
		if n := strings.Count("\n"+string(data)+"\n", "\n"+line+"\n"); n != 1 {
			t.Errorf("%s appears %d times in .gitignore:\n%s", line, n, data)
		}
	}
	r := run(t, t.TempDir(), "init")
	if r.code != 0 || !strings.Contains(r.stdout, "/.skills-cache/") || !strings.Contains(r.stdout, "--gitignore") {
		t.Errorf("init without --gitignore does not offer the lines:\n%s", r.stdout)
	}
}

// TestInitGitignoreInAnExistingWorkspace: init --gitignore in a workspace
// that already has its config writes the .gitignore lines and leaves the
// config alone.
func TestInitGitignoreInAnExistingWorkspace(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories: []\n")
	r := run(t, ws, "init", "--gitignore")
	data, _ := os.ReadFile(filepath.Join(ws, ".gitignore"))
	if r.code != 0 || !strings.Contains(string(data), "/.skills-cache/") {
		t.Errorf("init --gitignore: %d %s\n.gitignore: %q", r.code, r.stderr, data)
	}
	if cfg, _ := os.ReadFile(filepath.Join(ws, "skillsync.yaml")); string(cfg) != "repositories: []\n" {
		t.Errorf("the config was changed: %q", cfg)
	}
}

// TestReadEscapesTextOnATerminal: an escape sequence in a skill's text is
// shown escaped on a terminal (it cannot retitle the window or clear the
// screen) and written as it is to a pipe.
func TestReadEscapesTextOnATerminal(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	evil := "notes\x1b]0;PWNED\x07\x1b[2J\n"
	skilltest.WriteFile(t, filepath.Join(ws, "skills", "notes", "SKILL.md"), skilltest.SkillMD("notes", "Takes notes."))
	skilltest.WriteFile(t, filepath.Join(ws, "skills", "notes", "notes.txt"), evil)
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories: []\n")
	master, slave := openPTY(t)
	if r := runTo(t, ws, slave, "read", "notes", "notes.txt"); r.code != 0 {
		t.Fatalf("read to a terminal: %d %s", r.code, r.stderr)
	}
	got := drain(master)
	if strings.ContainsAny(got, "\x1b\x07") || !strings.Contains(got, `\x1b]0;PWNED`) {
		t.Errorf("the terminal got %q", got)
	}
	if r := run(t, ws, "read", "notes", "notes.txt"); r.stdout != evil {
		t.Errorf("to a pipe the bytes changed: %q", r.stdout)
	}
}
