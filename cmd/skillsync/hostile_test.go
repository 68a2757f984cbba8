package main

// Tests of hostile repositories, hostile workspaces and broken networks
// as a user meets them: through the command line, with hostile
// repositories built by git mktree and hostile workspaces built by hand.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/platform"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// victimDir makes a folder outside the workspace holding one file, which
// no sync may touch.
func victimDir(t *testing.T, dir string) string {
	t.Helper()
	skilltest.WriteFile(t, filepath.Join(dir, "keep.txt"), "precious\n")
	return dir
}

func assertVictim(t *testing.T, dir string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "keep.txt"))
	if err != nil || string(data) != "precious\n" {
		t.Fatalf("the folder outside the workspace was touched: %q %v", data, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("something was written into %s: %v", dir, entries)
	}
}

// auditToday reports whether the audit log has a file for today.
func auditToday(ws string) bool {
	_, err := os.Stat(filepath.Join(ws, "skills", ".audit", time.Now().UTC().Format("2006-01-02")+".jsonl"))
	return err == nil
}

// TestUnstageableSkillsAreSkipped: skills of a git source
// that cannot be staged (a file name that is not UTF-8, one over 255
// bytes, a tree with one name twice) are skipped with a problem naming
// each; every other skill and source is committed, and the targets, the
// audit log and the lock are written.
func TestUnstageableSkillsAreSkipped(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	md := func(name string) string {
		return up.Blob(skilltest.SkillMD(name, "Hostile "+name+"."))
	}
	blob := up.Blob("data\n")
	tree := func(name string, extra ...string) string {
		return up.MkTree(append([]string{"100644 blob " + md(name) + "\tSKILL.md"}, extra...)...)
	}
	skills := up.MkTree(
		"040000 tree "+tree("fine", "100644 blob "+blob+"\tref.md")+"\tfine",
		"040000 tree "+tree("not-utf8", "100644 blob "+blob+"\tbad\xff\xfe.md")+"\tnot-utf8",
		"040000 tree "+tree("long-name", "100644 blob "+blob+"\t"+strings.Repeat("n", 256))+"\tlong-name",
		"040000 tree "+tree("twice", "100644 blob "+blob+"\tx.md", "100644 blob "+up.Blob("other\n")+"\tx.md")+"\ttwice",
		"040000 tree "+tree("zz-after", "100644 blob "+blob+"\tref.md")+"\tzz-after",
	)
	up.CommitTree("main", "hostile", "040000 tree "+skills+"\tskills")

	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "local", "loc", "SKILL.md"), skilltest.SkillMD("loc", "A local skill."))
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: team\n    git: "+up.URL()+"\n  - name: local\n    dir: local\ntargets:\n  - dir: .claude/skills\n")
	r := run(t, ws, "sync", "--json")
	js := decode[syncJSON](t, r)
	if r.code != 0 && r.code != 3 {
		t.Fatalf("sync exits %d:\n%s", r.code, r.stderr)
	}
	t.Logf("exit %d; sources %+v; problems %+v", r.code, js.Sources, js.Problems)
	bad := map[string]bool{}
	for _, p := range js.Problems {
		if p.Source == "team" && p.Level == "error" {
			bad[p.Skill] = true
		}
	}
	for _, name := range []string{"not-utf8", "long-name", "twice"} {
		if !bad[name] {
			t.Errorf("no error problem names %s: %+v", name, js.Problems)
		}
		if _, err := os.Lstat(filepath.Join(ws, ".claude", "skills", name)); err == nil {
			// Written whole without the bad file is fine; half is not.
			if _, err := os.Stat(filepath.Join(ws, ".claude", "skills", name, "SKILL.md")); err != nil {
				t.Errorf("%s is in the target without its SKILL.md", name)
			}
		}
	}
	for _, p := range []string{".skills-cache/team/fine/ref.md", ".skills-cache/team/zz-after/ref.md", ".skills-cache/local/loc/SKILL.md",
		".claude/skills/fine/ref.md", ".claude/skills/zz-after/ref.md", ".claude/skills/loc/SKILL.md"} {
		if _, err := os.Stat(filepath.Join(ws, p)); err != nil {
			t.Errorf("a good skill was not written: %v", err)
		}
	}
	lockData, err := os.ReadFile(filepath.Join(ws, "skillsync.lock"))
	if err != nil || !strings.Contains(string(lockData), `"team"`) || !strings.Contains(string(lockData), `"local"`) || !strings.Contains(string(lockData), `"zz-after"`) {
		t.Errorf("the lock lacks a source or the good skill: %v\n%s", err, lockData)
	}
	if !auditToday(ws) {
		t.Error("no audit log was written")
	}
	if r := run(t, ws, "verify"); r.code != 0 {
		t.Errorf("verify after the sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, ws, "sync"); r.code != 0 && r.code != 3 {
		t.Errorf("a second sync exits %d: %s", r.code, r.stderr)
	}
}

// TestFailedSourceWithoutItsStoreKeepsItsTargets: a git
// source whose store was deleted by a cache cleaner and whose remote is
// gone keeps its skills in the cache and in the targets, as the message
// says it does.
func TestFailedSourceWithoutItsStoreKeepsItsTargets(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/remote-one", "From a remote that will go.")
	up.Write("skills/remote-one/run.sh", "#!/bin/sh\n", 0o755)
	up.Commit("one")
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "local", "loc", "SKILL.md"), skilltest.SkillMD("loc", "A local skill."))
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: team\n    git: "+up.URL()+"\n  - name: local\n    dir: local\ntargets:\n  - dir: .claude/skills\n  - dir: linked\n    mode: symlink\n")
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	store := filepath.Join(home(t), ".cache", "skillsync", "git")
	if _, err := os.Stat(store); err != nil {
		t.Fatalf("the git store is not where the test expects it: %v", err)
	}
	for _, dir := range []string{store, up.Dir} {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
	}
	skilltest.WriteFile(t, filepath.Join(ws, "local", "loc2", "SKILL.md"), skilltest.SkillMD("loc2", "Added since."))
	r := run(t, ws, "sync")
	if r.code != 3 || !strings.Contains(r.stderr, "source team failed and kept its last good files") {
		t.Errorf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, p := range []string{".skills-cache/team/remote-one/run.sh", ".claude/skills/remote-one/run.sh", "linked/remote-one/run.sh", ".claude/skills/loc2/SKILL.md"} {
		if _, err := os.Stat(filepath.Join(ws, p)); err != nil {
			t.Errorf("after the failed sync: %v", err)
		}
	}
	if r := run(t, ws, "read", "remote-one", "run.sh"); r.code != 0 || r.stdout != "#!/bin/sh\n" {
		t.Errorf("read: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, ws, "verify"); r.code != 0 {
		t.Errorf("verify: %d %s", r.code, r.stdout)
	}
}

// TestTargetConfigErrors: targets that would let a sync
// write where it must not are config errors, exit 2 with file:line, and
// nothing is written.
func TestTargetConfigErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ targets, want string }{
		{"  - dir: .skills-cache\n", "is the cache or inside it"},
		{"  - dir: .skills-cache/builtin\n", "is the cache or inside it"},
		{"  - dir: skills\n", "is the workspace layer or inside it"},
		{"  - dir: alice/skills/x\n", "is the user layer or inside it"},
		{"  - dir: .\n", "is the workspace;"},
		{"  - dir: /\n", "is the file system root"},
		{"  - dir: \"~\"\n", "is the home directory"},
		{"  - dir: ..\n", "holds the cache"},
		{"  - dir: .claude\n  - dir: .claude/skills\n", "overlaps targets[0]"},
		{"  - dir: .claude/skills\n  - dir: .claude/skills\n    mode: symlink\n", "names the same folder with mode symlink"},
	} {
		ws := t.TempDir()
		cfg := filepath.Join(ws, "skillsync.yaml")
		text := "user: alice\nrepositories:\n  - embedded: builtin\ntargets:\n" + c.targets
		skilltest.WriteFile(t, cfg, text)
		line := strings.Count(text[:strings.LastIndex(text, "  - dir:")], "\n") + 1
		r := run(t, ws, "sync")
		if r.code != 2 || !strings.Contains(r.stderr, cfg+":"+strconv.Itoa(line)+": targets[") || !strings.Contains(r.stderr, c.want) {
			t.Errorf("targets:\n%s  exit %d, stderr %q; want 2, %s:%d and %q", c.targets, r.code, r.stderr, cfg, line, c.want)
		}
		entries, _ := os.ReadDir(ws)
		if len(entries) != 1 {
			t.Errorf("targets:\n%s  a refused config wrote %v", c.targets, entries)
		}
	}
}

// TestTargetThroughAPlantedLink: a target whose folder,
// or a parent of it, is a symbolic link planted in the workspace is
// refused alone (exit 1, the link named, the report marking it refused),
// and nothing is written where the link points, by this sync or the
// next; the other target and the cache are synced, and status names it.
func TestTargetThroughAPlantedLink(t *testing.T) {
	t.Parallel()
	for _, link := range []string{".claude", ".claude/skills"} {
		base := t.TempDir()
		ws := filepath.Join(base, "ws")
		out := filepath.Join(base, "outside")
		victimDir(t, out)
		skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - embedded: builtin\ntargets:\n  - dir: .claude/skills\n  - dir: .agents/skills\n")
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, link)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(out, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"sync"}, {"sync", "--json"}} {
			r := run(t, ws, args...)
			if r.code != 1 || !strings.Contains(r.stderr, filepath.Join(ws, link)+" is a symbolic link") {
				t.Errorf("link at %s, %v: exit %d\n%s", link, args, r.code, r.stderr)
			}
			if args[len(args)-1] == "--json" && !strings.Contains(r.stdout, `"refused": true`) {
				t.Errorf("link at %s: --json does not mark the target refused:\n%s", link, r.stdout)
			}
		}
		assertVictim(t, out)
		if info, err := os.Lstat(filepath.Join(ws, link)); err != nil || info.Mode()&os.ModeSymlink == 0 {
			t.Errorf("link at %s: the link is gone: %v", link, err)
		}
		for _, p := range []string{".agents/skills/skillsync/SKILL.md", ".skills-cache/.manifest.json", "skillsync.lock"} {
			if !skilltest.Exists(filepath.Join(ws, p)) {
				t.Errorf("link at %s: the refused target stopped %s", link, p)
			}
		}
		r := run(t, ws, "status")
		if r.code != 1 || !strings.Contains(r.stdout, "target "+filepath.Join(ws, ".claude", "skills")+": refused") ||
			!strings.Contains(r.stdout, "needs a person: target "+filepath.Join(ws, ".claude", "skills")+" is reached through a symbolic link: "+filepath.Join(ws, link)) {
			t.Errorf("link at %s: status: exit %d\n%s", link, r.code, r.stdout)
		}
	}
}

// TestCarelessInput: a workspace that is a file, an
// empty config, a usage file that is a folder: a clear error naming the
// path, exit 2 for a config, and the cache as it was. A config whose
// sources are all gone asks for --prune-all and keeps the cache.
func TestCarelessInput(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	cfg := filepath.Join(ws, "skillsync.yaml")
	skilltest.WriteFile(t, filepath.Join(ws, "team", "one", "SKILL.md"), skilltest.SkillMD("one", "The team's."))
	good := "repositories:\n  - embedded: builtin\n  - name: team\n    dir: team\n"
	skilltest.WriteFile(t, cfg, good)
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %s", r.stderr)
	}
	cache := filepath.Join(ws, ".skills-cache")
	// What the cache holds: skills and records, not the lock file a sync
	// takes or its work area.
	content := func() map[string]entryState {
		st := treeState(t, cache)
		for p := range st {
			if p == "." || p == ".lock" || p == ".staging" || strings.HasPrefix(p, ".staging/") {
				delete(st, p)
			}
		}
		return st
	}
	before := content()
	cacheIntact := func(what string) {
		t.Helper()
		if diff := stateDiff(before, content()); len(diff) > 0 {
			t.Errorf("%s changed the cache:\n  %s", what, strings.Join(diff, "\n  "))
		}
	}

	skilltest.WriteFile(t, filepath.Join(ws, "afile"), "not a folder\n")
	skilltest.WriteFile(t, cfg, "workspace: afile\n"+good)
	for _, cmd := range []string{"sync", "list"} {
		r := run(t, ws, cmd)
		if r.code != 2 || !strings.Contains(r.stderr, cfg+":1: workspace "+filepath.Join(ws, "afile")+" is not a directory") {
			t.Errorf("workspace is a file, %s: %d %s", cmd, r.code, r.stderr)
		}
	}
	cacheIntact("a workspace that is a file")

	for _, empty := range []string{"", "\n\n", "# only a comment\n"} {
		skilltest.WriteFile(t, cfg, empty)
		r := run(t, ws, "sync")
		if r.code != 2 || !strings.Contains(r.stderr, cfg+": the file is empty") {
			t.Errorf("config %q: %d %s", empty, r.code, r.stderr)
		}
		cacheIntact("an empty config")
	}

	skilltest.WriteFile(t, cfg, good)
	usage := filepath.Join(ws, "skills", ".usage.json")
	if err := os.Remove(usage); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(usage, 0o755); err != nil {
		t.Fatal(err)
	}
	r := run(t, ws, "sync")
	if r.code == 0 || !strings.Contains(r.stderr, usage+" is a directory") {
		t.Errorf("usage file is a folder: %d %s", r.code, r.stderr)
	}
	cacheIntact("a usage file that is a folder")
	if r := run(t, ws, "list"); r.code != 0 || !strings.Contains(r.stdout, "one") {
		t.Errorf("list with a usage folder: %d %s", r.code, r.stderr)
	}
	if err := os.Remove(usage); err != nil {
		t.Fatal(err)
	}
	skilltest.WriteFile(t, usage, "{broken")
	if r := run(t, ws, "sync"); r.code != 0 || !strings.Contains(r.stderr, "warning: ") || !strings.Contains(r.stderr, usage) {
		t.Errorf("a broken usage file must warn, and sync go on: %d %s", r.code, r.stderr)
	}
	before = content()

	for _, text := range []string{"repositories: []\n", "workspace: .\n"} {
		skilltest.WriteFile(t, cfg, text)
		r := run(t, ws, "sync")
		if r.code != 2 || !strings.Contains(r.stderr, "--prune-all") || !strings.Contains(r.stderr, cfg) {
			t.Errorf("%q: %d %s", text, r.code, r.stderr)
		}
		cacheIntact("a config without sources")
	}
	r = run(t, ws, "sync", "--prune-all")
	if r.code != 0 {
		t.Fatalf("--prune-all: %d %s", r.code, r.stderr)
	}
	if got := dirNames(t, cache); len(got) != 0 {
		t.Errorf("--prune-all left %v in the cache", got)
	}
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Errorf("a second sync on the emptied cache: %d %s", r.code, r.stderr)
	}
}

// TestHostileRecordFilesThroughTheCLI: a committed target
// record and a manifest that name paths out of their folders are never
// obeyed; the folders they point at are intact after a sync.
func TestHostileRecordFilesThroughTheCLI(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	victim := victimDir(t, filepath.Join(base, "victim"))
	near := victimDir(t, filepath.Join(ws, ".claude", "x"))
	cacheNear := victimDir(t, filepath.Join(ws, ".skills-cache", "x"))
	skilltest.WriteFile(t, filepath.Join(ws, "team", "one", "SKILL.md"), skilltest.SkillMD("one", "The team's."))
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: team\n    dir: team\ntargets:\n  - dir: .claude/skills\n")
	skilltest.WriteFile(t, filepath.Join(ws, ".claude", "skills", ".skillsync.json"),
		`{"version":1,"skills":{"../../../victim":{"hash":"","mode":"copy"},"../x":{"hash":"","mode":"copy"}}}`)
	skilltest.WriteFile(t, filepath.Join(ws, ".skills-cache", ".manifest.json"),
		`{"version":1,"sources":{"team":{"revision":"x","skills":{"../x":{"hash":"","files":{}},"../../../victim":{"hash":"","files":{}}}},"../victim":{"revision":"y","skills":{}}}}`)
	r := run(t, ws, "sync")
	if r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	for _, dir := range []string{victim, near, cacheNear} {
		assertVictim(t, dir)
	}
	if !strings.Contains(r.stderr, "set aside") {
		t.Errorf("no warning that the hostile records were set aside:\n%s", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, ".claude", "skills", "one", "SKILL.md")); err != nil {
		t.Errorf("the good skill was not written: %v", err)
	}
	// Once more, with the records skillsync rebuilt: still nothing touched.
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("second sync: %d %s", r.code, r.stderr)
	}
	for _, dir := range []string{victim, near, cacheNear} {
		assertVictim(t, dir)
	}
}

// TestUnreadableFileSkipsOneSkill: a file of a local skill that
// cannot be read makes that skill a problem; the other skills and sources
// are synced. Root reads every file whatever its mode, so as root the
// sync runs as the user nobody in a workspace that nobody owns.
func TestUnreadableFileSkipsOneSkill(t *testing.T) {
	t.Parallel()
	unreadableSkipsOneSkill(t, "secret.txt")
}

// TestUnreadableDirSkipsOneSkill: a folder of a local skill
// that cannot be read skips that skill only, on a fresh cache too.
func TestUnreadableDirSkipsOneSkill(t *testing.T) {
	t.Parallel()
	unreadableSkipsOneSkill(t, "secret")
}

// unreadableSkipsOneSkill syncs a local source whose skill locked holds
// what cannot be read: secret.txt, a file, or secret, a folder.
func unreadableSkipsOneSkill(t *testing.T, what string) {
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	skilltest.WriteFile(t, filepath.Join(ws, "team", "fine", "SKILL.md"), skilltest.SkillMD("fine", "Readable."))
	skilltest.WriteFile(t, filepath.Join(ws, "team", "locked", "SKILL.md"), skilltest.SkillMD("locked", "One file is not readable."))
	skilltest.WriteFile(t, filepath.Join(ws, "team", "locked", "secret.txt"), "no one may read this\n")
	skilltest.WriteFile(t, filepath.Join(ws, "team", "locked", "secret", "inside.txt"), "nor this\n")
	skilltest.WriteFile(t, filepath.Join(ws, "team", "zz-last", "SKILL.md"), skilltest.SkillMD("zz-last", "After the bad one."))
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - embedded: builtin\n  - name: team\n    dir: team\ntargets:\n  - dir: .claude/skills\n")
	if err := os.Chmod(filepath.Join(ws, "team", "locked", what), 0); err != nil {
		t.Fatal(err)
	}
	var r result
	if os.Geteuid() != 0 {
		r = run(t, ws, "sync", "--json")
	} else {
		r = runAsNobody(t, base, ws, "sync", "--json")
	}
	if r.code != 0 && r.code != 3 {
		t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	js := decode[syncJSON](t, r)
	var named bool
	for _, p := range js.Problems {
		if p.Skill == "locked" && p.Source == "team" && strings.Contains(p.Message, what) {
			named = true
		}
	}
	if !named {
		t.Errorf("no problem names locked's %s: %+v", what, js.Problems)
	}
	for _, s := range js.Sources {
		if s.Status == "failed" {
			t.Errorf("source %s failed for one unreadable file: %s", s.Source, s.Error)
		}
	}
	for _, p := range []string{".skills-cache/team/fine", ".skills-cache/team/zz-last", ".skills-cache/builtin/skillsync", ".claude/skills/fine", ".claude/skills/zz-last"} {
		if _, err := os.Stat(filepath.Join(ws, p, "SKILL.md")); err != nil {
			t.Errorf("a good skill was not synced: %v", err)
		}
	}
	if _, err := os.Lstat(filepath.Join(ws, ".skills-cache", "team", "locked")); err == nil {
		t.Error("the skill with an unreadable part is in the cache, incomplete")
	}
	if lockData, _ := os.ReadFile(filepath.Join(ws, "skillsync.lock")); !strings.Contains(string(lockData), `"zz-last"`) {
		t.Errorf("the lock lacks the good skills:\n%s", lockData)
	}
}

// runAsNobody runs the built binary as the user nobody in ws, with a home
// of its own; base and everything below it is handed to nobody first.
func runAsNobody(t *testing.T, base, ws string, args ...string) result {
	t.Helper()
	const nobody = 65534
	bin := binary(t)
	home := filepath.Join(base, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	err := filepath.Walk(base, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, nobody, nobody)
	})
	if err != nil {
		t.Fatal(err)
	}
	// nobody must reach base and the binary through folders made 0700.
	for _, dir := range []string{filepath.Dir(base), filepath.Dir(bin)} {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = ws
	cmd.Env = []string{"HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "PATH=" + os.Getenv("PATH")}
	platform.SetProcAttr(cmd, true, nobody, nobody, 0)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Skipf("cannot run a process as nobody here (%v); root reads every file, so the unreadable file cannot be made", err)
	}
	return result{out.String(), errb.String(), code}
}

// TestSyncErrorsAfterTheReportArePrinted: an error that stops a sync after
// the cache was written (here a target that is a file) is printed with the
// report, which says what the cache took in, and exits 1.
func TestSyncErrorsAfterTheReportArePrinted(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, ".claude", "skills"), "a file where the target should be\n")
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - embedded: builtin\ntargets:\n  - dir: .claude/skills\n")
	r := run(t, ws, "sync")
	if r.code != 1 || !strings.Contains(r.stderr, "skillsync: target: "+filepath.Join(ws, ".claude", "skills")+" is not a directory") {
		t.Errorf("sync: exit %d, stderr %q", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "skills: 2 added") {
		t.Errorf("the report does not say what the cache took in:\n%s", r.stdout)
	}
	if data, _ := os.ReadFile(filepath.Join(ws, ".claude", "skills")); string(data) != "a file where the target should be\n" {
		t.Errorf("the file in the target's place was changed: %q", data)
	}
}

// TestLinkedLayerFolderIsNotWrittenThrough: a skills/ planted as a link to
// a folder outside the workspace is read (its skills are the user's), but
// no record (usage, audit, drafts, import state) is written through it.
func TestLinkedLayerFolderIsNotWrittenThrough(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	outside := victimDir(t, t.TempDir())
	skilltest.Skill(t, outside, "notes", "Take notes.", nil)
	if err := os.Symlink(outside, filepath.Join(ws, "skills")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(outside, "keep.txt")); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadDir(outside)
	run(t, ws, "sync")
	run(t, ws, "use", "notes")
	draft := skilltest.Skill(t, t.TempDir(), "draft", "A draft.", nil)
	run(t, ws, "propose", draft)
	after, _ := os.ReadDir(outside)
	if len(after) != len(before) {
		var names []string
		for _, e := range after {
			names = append(names, e.Name())
		}
		t.Errorf("records were written through the linked skills/: %v", names)
	}
	if r := run(t, ws, "use", "notes"); r.code == 0 || !strings.Contains(r.stderr, "symbolic link") {
		t.Errorf("use through a linked layer folder: %d %s", r.code, r.stderr)
	}
}
