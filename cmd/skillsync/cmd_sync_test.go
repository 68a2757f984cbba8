package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/flock"
	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/skilltest"
)

type syncJSON struct {
	Sources []struct {
		Source, Type, Revision, Status, Error string
		Skills                                int
	}
	Skills struct{ Added, Updated, Removed []string }
	Files  struct {
		Written, Unchanged, Removed int
		BytesWritten                int64 `json:"bytes_written"`
	}
	Targets []struct {
		Dir              string
		Written, Removed int
		Conflicts        []string
	}
	Problems []struct{ Source, Skill, Path, Level, Rule, Message string }
	Frozen   []string
	ExitCode *int `json:"exit_code"`
	Outcomes []string
}

func TestSyncOnTheBuiltInDefault(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := run(t, dir, "sync")
	if r.code != 0 || !strings.Contains(r.stdout, "skills: 2 added") {
		t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, ".skills-cache", "builtin", "skillsync", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	js := decode[syncJSON](t, run(t, dir, "sync", "--json"))
	if js.Files.Written != 0 || js.Sources[0].Status != "unchanged" || js.Skills.Added == nil || js.Problems == nil || js.Targets == nil {
		t.Errorf("second sync = %+v", js)
	}
	p := run(t, dir, "prompt")
	if !strings.Contains(p.stdout, "<location>\n"+filepath.Join(dir, ".skills-cache", "builtin", "skillsync", "SKILL.md")) {
		t.Errorf("the prompt does not locate skills in the cache:\n%s", p.stdout)
	}
}

// TestSyncSaysWhyItBringsNothing: a config with no source and no target
// (init's when it finds no agent) makes a sync that can bring no skill
// anywhere: it says so, and how to add each, rather than "0 added" alone.
// A config with either, or none (the built-in default), says nothing.
func TestSyncSaysWhyItBringsNothing(t *testing.T) {
	t.Parallel()
	const hint = "names no source and no target, so sync brings no skill anywhere: skillsync add owner/repo adds a source"
	for _, tc := range []struct {
		name, config string // config "" writes none
		hint         bool
	}{
		{"init's without an agent", "targets: []\nrepositories:\n  # - embedded: builtin\n", true},
		{"a target only", "targets:\n  - dir: .claude/skills\n", false},
		{"a source only", "repositories:\n  - embedded: builtin\n", false},
		{"no config", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if tc.config != "" {
				skilltest.WriteFile(t, filepath.Join(dir, "skillsync.yaml"), tc.config)
			}
			for _, args := range [][]string{{"sync"}, {"sync", "--json"}} {
				r := run(t, dir, args...)
				if r.code != 0 || strings.Contains(r.stderr, hint) != tc.hint {
					t.Errorf("%v: exit %d, hint %v, want %v\n%s", args, r.code, !tc.hint, tc.hint, r.stderr)
				}
				if tc.hint && !strings.Contains(r.stderr, filepath.Join(dir, "skillsync.yaml")) {
					t.Errorf("%v: the hint does not name the config:\n%s", args, r.stderr)
				}
			}
		})
	}
}

func TestSyncExitCodes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := "repositories:\n  - embedded: builtin\n  - name: gone\n    git: file://" + filepath.Join(dir, "no-such-repo") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "skillsync.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, dir, "sync")
	if r.code != 3 || !strings.Contains(r.stderr, "skillsync: source gone failed, and the cache holds none of its files to keep: ") {
		t.Errorf("partial sync: exit %d\n%s", r.code, r.stderr)
	}

	if err := os.MkdirAll(filepath.Join(dir, ".skills-cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The sync above has closed its lock, but a child process another
	// test forked in that moment shares the open file until it execs:
	// the lock is taken with a wait, not on the first try.
	held, err := flock.Acquire(context.Background(), filepath.Join(dir, ".skills-cache", ".lock"), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	r = run(t, dir, "sync", "--wait", "200ms")
	held.Close()
	if r.code != 1 || !strings.Contains(r.stderr, "another sync holds the cache") || !strings.Contains(r.stderr, "held by pid "+strconv.Itoa(os.Getpid())) {
		t.Errorf("lock held: exit %d\n%s", r.code, r.stderr)
	}
}

func TestFrozenVerifyRepair(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	if r := run(t, ws, "sync", "--frozen"); r.code != 0 {
		t.Fatalf("frozen on an unchanged workspace: %d %s", r.code, r.stderr)
	}
	skillFile := filepath.Join(ws, "team", "release-notes", "SKILL.md")
	data, _ := os.ReadFile(skillFile)
	if err := os.WriteFile(skillFile, append(data, []byte("\nmore\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, ws, "sync", "--frozen")
	if r.code != 1 || !strings.Contains(r.stderr, "~ skill team/release-notes: lock has") || !strings.Contains(r.stderr, "skillsync update") {
		t.Errorf("frozen mismatch: exit %d\n%s", r.code, r.stderr)
	}
	if r := run(t, ws, "update", "team"); r.code != 0 || !strings.Contains(r.stdout, "1 updated") {
		t.Errorf("update team: %d %s %s", r.code, r.stdout, r.stderr)
	}

	cached := filepath.Join(ws, ".skills-cache", "team", "release-notes")
	if err := os.WriteFile(filepath.Join(cached, "SKILL.md"), []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(cached, "scripts", "draft.sh")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cached, "extra.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = run(t, ws, "verify")
	for _, want := range []string{"modified " + filepath.Join(cached, "SKILL.md"), "missing " + filepath.Join(cached, "scripts", "draft.sh"), "extra " + filepath.Join(cached, "extra.txt")} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("verify lacks %q:\n%s", want, r.stdout)
		}
	}
	if r.code != 1 {
		t.Errorf("verify with differences exits %d", r.code)
	}
	if r := run(t, ws, "verify", "--repair"); r.code != 0 {
		t.Errorf("repair: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, ws, "verify"); r.code != 0 || r.stdout != "" {
		t.Errorf("verify after repair: %d %s", r.code, r.stdout)
	}
}

// TestSyncCountsTargetFiles checks that a target's line counts files
// both ways, as the cache's line does: a removed skill of three files is
// three files removed, not one.
func TestSyncCountsTargetFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"team/a/SKILL.md":          "---\nname: a\ndescription: The a skill.\n---\nBody.\n",
		"team/a/scripts/run.sh":    "echo a\n",
		"team/a/references/doc.md": "A reference.\n",
		"team/b/SKILL.md":          "---\nname: b\ndescription: The b skill.\n---\nBody.\n",
		"skillsync.yaml":           "repositories:\n  - name: team\n    dir: team\ntargets:\n  - dir: out\n",
	}
	writeTree(t, dir, files)
	out := filepath.Join(dir, "out")
	r := run(t, dir, "sync")
	if r.code != 0 || !strings.Contains(r.stdout, "target "+out+": 4 files written, 0 removed\n") {
		t.Fatalf("first sync: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if err := os.RemoveAll(filepath.Join(dir, "team", "a")); err != nil {
		t.Fatal(err)
	}
	r = run(t, dir, "sync")
	if r.code != 0 || !strings.Contains(r.stdout, "files: 0 written, 1 unchanged, 3 removed") ||
		!strings.Contains(r.stdout, "target "+out+": 0 files written, 3 removed\n") {
		t.Fatalf("sync after a skill of three files went: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// writeTree writes files, by slash path under dir, with their folders.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestVerifyBeforeTheFirstSync checks that verify does not call a cache
// that holds none of the configured sources a match.
func TestVerifyBeforeTheFirstSync(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"team/a/SKILL.md": "---\nname: a\ndescription: The a skill.\n---\nBody.\n",
		"skillsync.yaml":  "repositories:\n  - name: team\n    dir: team\n",
	})
	r := run(t, dir, "verify")
	if r.code != 1 || r.stdout != "unsynced "+filepath.Join(dir, ".skills-cache", "team")+"\n" ||
		!strings.Contains(r.stderr, "1 source not in this cache: no sync has brought it") {
		t.Fatalf("verify before any sync: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, dir, "verify", "--repair"); r.code != 0 || !strings.Contains(r.stdout, "repaired unsynced") {
		t.Fatalf("repair: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, dir, "verify"); r.code != 0 || r.stdout != "" {
		t.Errorf("verify after the repair: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, ".skills-cache", "team", "a", "SKILL.md")); err != nil {
		t.Errorf("the repair did not sync the source: %v", err)
	}
	// A source that cannot be synced stays unsynced: the repair says so,
	// and why, in text and JSON.
	gone := filepath.Join(dir, "no-such-repo")
	writeTree(t, dir, map[string]string{"skillsync.yaml": "repositories:\n  - name: team\n    dir: team\n  - name: gone\n    git: file://" + gone + "\n"})
	r = run(t, dir, "verify", "--repair")
	if r.code != 1 || r.stdout != "unsynced "+filepath.Join(dir, ".skills-cache", "gone")+"\n" ||
		!strings.Contains(r.stderr, "source gone failed: ") {
		t.Errorf("repair of a source that fails: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, dir, "verify", "--repair", "--json")
	var out struct{ Differences, Repaired []struct{ Path, Kind string } }
	if err := json.Unmarshal([]byte(r.stdout), &out); r.code != 1 || err != nil || len(out.Differences) != 1 || out.Differences[0].Kind != "unsynced" || len(out.Repaired) != 0 {
		t.Errorf("repair of a source that fails, JSON: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	// With every source failing, the repair mends nothing either.
	writeTree(t, dir, map[string]string{"skillsync.yaml": "repositories:\n  - name: gone\n    git: file://" + gone + "\n"})
	if r := run(t, dir, "verify", "--repair"); r.code != 1 || strings.Contains(r.stdout, "repaired") || strings.Contains(r.stderr, "match their records") {
		t.Errorf("repair with every source failing: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestFrozenMismatchInJSON: a sync --frozen that fails says why in its
// JSON too, whether a skill's content or the config left the lock.
func TestFrozenMismatchInJSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	one := "repositories:\n  - name: team\n    dir: team\n"
	writeTree(t, dir, map[string]string{
		"team/a/SKILL.md": "---\nname: a\ndescription: The a skill.\n---\nBody.\n",
		"skillsync.yaml":  one,
	})
	if r := run(t, dir, "sync"); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	if js := decode[syncJSON](t, run(t, dir, "sync", "--frozen", "--json")); js.Frozen == nil || len(js.Frozen) != 0 {
		t.Errorf("a frozen sync that matches: frozen %#v, want []", js.Frozen)
	}
	writeTree(t, dir, map[string]string{"team/a/SKILL.md": "---\nname: a\ndescription: The a skill.\n---\nBody, edited.\n"})
	r := run(t, dir, "sync", "--frozen", "--json")
	js := decode[syncJSON](t, r)
	if r.code != 1 || len(js.Frozen) != 1 || !strings.HasPrefix(js.Frozen[0], "~ skill team/a: lock has ") {
		t.Errorf("content mismatch: exit %d, frozen %q", r.code, js.Frozen)
	}
	// A target that fails after the mismatch was found does not hide it.
	writeTree(t, dir, map[string]string{
		"skillsync.yaml": one + "targets:\n  - agents_md: AGENTS.md\n",
		"AGENTS.md":      "# Project\n<!-- skillsync:begin -->\nno end marker\n",
	})
	r = run(t, dir, "sync", "--frozen", "--json")
	js = decode[syncJSON](t, r)
	if r.code != 1 || len(js.Frozen) != 1 || !strings.Contains(r.stderr, "AGENTS.md") {
		t.Errorf("content mismatch and a failing target: exit %d, frozen %q\n%s", r.code, js.Frozen, r.stderr)
	}
	writeTree(t, dir, map[string]string{"skillsync.yaml": one})
	writeTree(t, dir, map[string]string{"skillsync.yaml": one + "  - name: more\n    dir: team\n"})
	r = run(t, dir, "sync", "--frozen", "--json")
	js = decode[syncJSON](t, r)
	if r.code != 1 || len(js.Frozen) != 1 || !strings.Contains(js.Frozen[0], "source more (dir team) is in the config, not in the lock") || js.Skills.Added == nil {
		t.Errorf("config mismatch: exit %d, %+v", r.code, js)
	}
}

// TestFailedSourceKeepsItsLockEntry: a source whose ref changed in the
// config and then failed to sync keeps the files of its old ref, and the
// lock keeps saying so: locking the old revision under the new ref made
// sync --frozen pass on every machine while it installed the old ref.
func TestFailedSourceKeepsItsLockEntry(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/alpha", "Alpha on main.")
	main := up.Commit("main")
	up.Git("checkout", "-q", "-b", "other")
	up.Skill("skills/alpha", "Alpha on other.")
	up.Commit("other")
	up.Git("checkout", "-q", "main")
	ws := t.TempDir()
	config := "repositories:\n  - name: team\n    git: %s\n    ref: %s\n"
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), fmt.Sprintf(config, up.URL(), "main"))
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	before, err := os.ReadFile(filepath.Join(ws, "skillsync.lock"))
	if err != nil {
		t.Fatal(err)
	}
	// The ref moves to a branch upstream lacks; the source fails.
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), fmt.Sprintf(config, up.URL(), "nosuch"))
	if r := run(t, ws, "sync"); r.code == 0 {
		t.Fatalf("a sync of a ref upstream lacks passed: %s", r.stdout)
	}
	after, err := os.ReadFile(filepath.Join(ws, "skillsync.lock"))
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Errorf("the failed sync rewrote the lock:\n%s\nwas:\n%s", after, before)
	}
	if !strings.Contains(string(after), main) {
		t.Errorf("the lock lost main's revision %s:\n%s", main, after)
	}
	// On another machine the config names other, the lock main's files.
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), fmt.Sprintf(config, up.URL(), "other"))
	ci := t.TempDir()
	for _, f := range []string{"skillsync.yaml", "skillsync.lock"} {
		data, _ := os.ReadFile(filepath.Join(ws, f))
		skilltest.WriteFile(t, filepath.Join(ci, f), string(data))
	}
	if r := run(t, ci, "sync", "--frozen"); r.code == 0 {
		t.Errorf("sync --frozen passed with a lock of ref main and a config of ref other: %s", r.stdout)
	}
}

// TestSyncWithoutItsConfigKeepsTheSources: skillsync.yaml deleted (a
// branch switch, a stash) leaves the built-in default, which does not
// name the workspace's sources: sync refuses to take them out of the
// cache, the lock and the targets, until --prune-all says so.
func TestSyncWithoutItsConfigKeepsTheSources(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{
		"team/a/SKILL.md": "---\nname: a\ndescription: The a skill.\n---\nBody.\n",
		"skillsync.yaml":  "repositories:\n  - name: team\n    dir: team\ntargets:\n  - dir: .claude/skills\n",
	})
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	lockBefore, _ := os.ReadFile(filepath.Join(ws, "skillsync.lock"))
	if err := os.Remove(filepath.Join(ws, "skillsync.yaml")); err != nil {
		t.Fatal(err)
	}
	r := run(t, ws, "sync")
	if r.code != 2 || !strings.Contains(r.stderr, "the built-in default does not name (team)") {
		t.Errorf("sync without its config: %d %s", r.code, r.stderr)
	}
	lockAfter, _ := os.ReadFile(filepath.Join(ws, "skillsync.lock"))
	if string(lockAfter) != string(lockBefore) || !fileExists(filepath.Join(ws, ".claude", "skills", "a", "SKILL.md")) {
		t.Errorf("the refused sync changed the lock or the target:\n%s", lockAfter)
	}
	if r := run(t, ws, "sync", "--prune-all"); r.code != 0 || fileExists(filepath.Join(ws, ".skills-cache", "team", "a", "SKILL.md")) {
		t.Errorf("sync --prune-all on the default: %d %s", r.code, r.stderr)
	}
}

// TestRelativeGitPathIsTheConfigsFolders: git: ../repo names a repository
// beside the config's folder wherever skillsync runs, and the lock keeps
// it as written, the same on every machine.
func TestRelativeGitPathIsTheConfigsFolders(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	up := gittest.NewRepoIn(t, filepath.Join(root, "repo"), "main")
	up.Skill("skills/alpha", "Alpha.")
	up.Commit("one")
	proj := filepath.Join(root, "proj")
	skilltest.WriteFile(t, filepath.Join(proj, "skillsync.yaml"), "repositories:\n  - name: team\n    git: ../repo\n")
	sub := filepath.Join(proj, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := run(t, sub, "--config", filepath.Join(proj, "skillsync.yaml"), "sync"); r.code != 0 {
		t.Fatalf("sync from a subfolder: %d %s", r.code, r.stderr)
	}
	lock, _ := os.ReadFile(filepath.Join(proj, "skillsync.lock"))
	if !strings.Contains(string(lock), `"url": "../repo"`) {
		t.Errorf("the lock does not keep the URL as written:\n%s", lock)
	}
}

// TestTargetsKeepWhatAFailedSourceCannotGive: the cache removed by hand
// and the remote out of reach, the source fails; while its local copy
// (the git store) is at the locked revision the cache is built again from
// it, and once that is gone too, with nothing to give, the targets keep
// their copies of its locked skills as they are; the next sync that
// reaches the remote places them again.
func TestTargetsKeepWhatAFailedSourceCannotGive(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/alpha", "Alpha.")
	up.Commit("one")
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: team\n    git: "+up.URL()+"\ntargets:\n  - dir: .claude/skills\n")
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	placed := filepath.Join(ws, ".claude", "skills", "alpha", "SKILL.md")
	if err := os.RemoveAll(filepath.Join(ws, ".skills-cache")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(up.Dir, up.Dir+".away"); err != nil {
		t.Fatal(err)
	}
	cached := filepath.Join(ws, ".skills-cache", "team", "alpha", "SKILL.md")
	r := run(t, ws, "sync")
	if r.code == 0 || !fileExists(cached) || !strings.Contains(r.stderr, "built again from the local copy") {
		t.Errorf("sync with no cache and no remote, the store kept: exit %d, alpha cached again %v\n%s%s", r.code, fileExists(cached), r.stdout, r.stderr)
	}
	if err := os.RemoveAll(filepath.Join(ws, ".skills-cache")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(home(t), ".cache", "skillsync")); err != nil {
		t.Fatal(err)
	}
	if r := run(t, ws, "sync"); r.code == 0 || !fileExists(placed) || fileExists(cached) {
		t.Errorf("sync with no cache, no store and no remote: exit %d, alpha still placed %v\n%s%s", r.code, fileExists(placed), r.stdout, r.stderr)
	}
	if err := os.Rename(up.Dir+".away", up.Dir); err != nil {
		t.Fatal(err)
	}
	if r := run(t, ws, "sync"); r.code != 0 || !fileExists(placed) {
		t.Errorf("sync once the remote is back: %d %s", r.code, r.stderr)
	}
	if r := run(t, ws, "verify"); r.code != 0 {
		t.Errorf("verify after: %d %s%s", r.code, r.stdout, r.stderr)
	}
}

// TestNoRebuildFromAnotherRevision: a local copy a fetch moved past the
// locked revision does not rebuild a removed cache while the remote is
// out of reach: the cache and the lock would disagree.
func TestNoRebuildFromAnotherRevision(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/alpha", "Alpha.")
	up.Commit("one")
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: team\n    git: "+up.URL()+"\n")
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	up.Skill("skills/alpha", "Alpha, edited.")
	up.Commit("two")
	if r := run(t, ws, "fetch"); r.code != 0 {
		t.Fatalf("fetch: %d %s", r.code, r.stderr)
	}
	if err := os.RemoveAll(filepath.Join(ws, ".skills-cache")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(up.Dir, up.Dir+".away"); err != nil {
		t.Fatal(err)
	}
	r := run(t, ws, "sync")
	if r.code == 0 || fileExists(filepath.Join(ws, ".skills-cache", "team", "alpha", "SKILL.md")) || strings.Contains(r.stderr, "built again") {
		t.Errorf("sync from a local copy past the lock: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestSyncSaysWhoKeepsATarget: a target another workspace keeps is told
// as left alone, not as synced, and the sync exits 1 naming both.
func TestSyncSaysWhoKeepsATarget(t *testing.T) {
	t.Parallel()
	shared := filepath.Join(t.TempDir(), "shared")
	a, b := t.TempDir(), t.TempDir()
	for _, ws := range []string{a, b} {
		skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories: []\ntargets:\n  - dir: "+shared+"\n")
	}
	if r := run(t, a, "sync"); r.code != 0 {
		t.Fatalf("A's sync: %d %s", r.code, r.stderr)
	}
	r := run(t, b, "sync")
	if r.code != 1 || !strings.Contains(r.stdout, "target "+shared+": refused, left as it is") || !strings.Contains(r.stderr, a) {
		t.Errorf("B's sync: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, b, "sync", "--json"); !strings.Contains(r.stdout, `"refused": true`) {
		t.Errorf("B's sync --json does not mark the target refused:\n%s", r.stdout)
	}
}

// TestSyncSaysWhyAWorkspaceSkillIsNotPlaced: an invalid skill in the
// workspace's skills/ is said by every sync, at its layer, file and line
// as list says it, on stderr and in --json's problems; the sync still
// exits 0, the other skills placed.
func TestSyncSaysWhyAWorkspaceSkillIsNotPlaced(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"skills/deploy/SKILL.md": "---\nname: deploy\ndescription: Deploy: build and ship the app\n---\nSteps\n",
		"skills/ok/SKILL.md":     "---\nname: ok\ndescription: The ok skill.\n---\nBody.\n",
		"skillsync.yaml":         "repositories: []\ntargets:\n  - dir: out\n",
	})
	const said = "workspace:deploy/SKILL.md:3: error: frontmatter is not valid YAML"
	for _, when := range []string{"first sync", "second sync"} {
		r := run(t, dir, "sync")
		if r.code != 0 || !strings.Contains(r.stderr, said) {
			t.Fatalf("%s: exit %d, want 0 and %q on stderr\n%s%s", when, r.code, said, r.stdout, r.stderr)
		}
	}
	r := run(t, dir, "sync", "--json")
	var out struct {
		Problems []struct {
			Source, Path, Level, Rule string
			Line                      int
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 0 {
		t.Fatalf("sync --json: exit %d, %v\n%s", r.code, err, r.stdout)
	}
	if len(out.Problems) != 1 || out.Problems[0].Source != "workspace" || out.Problems[0].Path != "deploy/SKILL.md" || out.Problems[0].Line != 3 || out.Problems[0].Rule != "frontmatter-yaml" {
		t.Errorf("sync --json problems: %+v", out.Problems)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "ok", "SKILL.md")); err != nil {
		t.Errorf("ok is not placed: %v", err)
	}
}

// TestSyncJSONReportsEveryStop: a sync --json stopped before it had a
// report (another sync holding the lock, a usage file or a cache it
// cannot use, a config that loads but that it refuses) still prints its
// report, with exit_code and outcomes, as the exit table in
// docs/sync.md has it; so do update --json, and add --json and remove
// --json under sync.
func TestSyncJSONReportsEveryStop(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, what string, r result, code int, js syncJSON) {
		t.Helper()
		if r.code != code || js.ExitCode == nil || *js.ExitCode != code || strings.Join(js.Outcomes, ",") != "error" || js.Sources == nil {
			t.Errorf("%s: exit %d, report %+v; want %d and outcomes [error]\nstdout %s\nstderr %s", what, r.code, js, code, r.stdout, r.stderr)
		}
		if r.stderr == "" {
			t.Errorf("%s: stderr does not say why", what)
		}
	}
	hold := func(t *testing.T, dir string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, ".skills-cache"), 0o755); err != nil {
			t.Fatal(err)
		}
		held, err := flock.Acquire(context.Background(), filepath.Join(dir, ".skills-cache", ".lock"), 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { held.Close() })
	}
	t.Run("lock held", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		skilltest.WriteFile(t, filepath.Join(dir, "skillsync.yaml"), "repositories:\n  - embedded: builtin\n")
		hold(t, dir)
		for _, args := range [][]string{{"sync", "--json", "--wait", "100ms"}, {"update", "--json", "--wait", "100ms"}} {
			r := run(t, dir, args...)
			check(t, strings.Join(args, " "), r, 1, decode[syncJSON](t, r))
			if !strings.Contains(r.stderr, "another sync holds the cache") {
				t.Errorf("%v: %s", args, r.stderr)
			}
		}
	})
	t.Run("add and remove", func(t *testing.T) {
		// Their syncs wait DefaultWait for a lock: a usage file that is a
		// folder stops them at once.
		t.Parallel()
		dir := t.TempDir()
		skilltest.Skill(t, filepath.Join(dir, "shared"), "notes", "Take notes.", nil)
		if err := os.MkdirAll(filepath.Join(dir, "skills", ".usage.json"), 0o755); err != nil {
			t.Fatal(err)
		}
		r := run(t, dir, "add", "./shared", "--json")
		check(t, "add --json", r, 1, *decode[struct{ Sync *syncJSON }](t, r).Sync)
		r = run(t, dir, "remove", "shared", "--json")
		check(t, "remove --json", r, 1, *decode[struct{ Sync *syncJSON }](t, r).Sync)
		if !strings.Contains(r.stderr, "until a sync: run skillsync sync") {
			t.Errorf("remove --json no longer says the sync is still to run:\n%s", r.stderr)
		}
	})
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		args  []string
		code  int
		said  string // on stderr
	}{
		{"usage file a directory", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "skills", ".usage.json")); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, "skills", ".usage.json"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, []string{"sync", "--json"}, 1, "skills/.usage.json is a directory, not a file; move it away; the sync stopped before it changed anything"},
		{"cache a file", func(t *testing.T, dir string) {
			if err := os.RemoveAll(filepath.Join(dir, ".skills-cache")); err != nil {
				t.Fatal(err)
			}
			skilltest.WriteFile(t, filepath.Join(dir, ".skills-cache"), "not a folder\n")
		}, []string{"sync", "--json"}, 1, ".skills-cache is not a directory: move it away, and the next sync makes the cache folder there"},
		{"config refused", func(t *testing.T, dir string) {
			skilltest.WriteFile(t, filepath.Join(dir, "skillsync.yaml"), "repositories: []\n")
		}, []string{"sync", "--json"}, 2, "--prune-all"},
		{"update of an unknown source", func(*testing.T, string) {}, []string{"update", "nope", "--json"}, 2, `no source named "nope"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			skilltest.WriteFile(t, filepath.Join(dir, "skillsync.yaml"), "repositories:\n  - embedded: builtin\n")
			if r := run(t, dir, "sync"); r.code != 0 {
				t.Fatalf("first sync: %d %s", r.code, r.stderr)
			}
			tc.setup(t, dir)
			r := run(t, dir, tc.args...)
			check(t, strings.Join(tc.args, " "), r, tc.code, decode[syncJSON](t, r))
			if !strings.Contains(r.stderr, tc.said) {
				t.Errorf("%v: stderr does not say %q:\n%s", tc.args, tc.said, r.stderr)
			}
		})
	}
}
