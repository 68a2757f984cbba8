package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/skilltest"
)

func TestUseCountsEveryCallAcrossProcesses(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs 1000 processes")
	}
	ws := t.TempDir()
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	const procs, calls = 8, 125
	// One Go runtime thread and no collector for each process: a use
	// lives for milliseconds, and its start then costs a quarter less
	// CPU. The processes still run side by side (eight writers and the
	// curations), which is what the count is about.
	lean := []string{"GOMAXPROCS=1", "GOGC=off"}
	var wg sync.WaitGroup
	errs := make(chan string, procs+1)
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < calls; i++ {
				if r := runProcess(t, ws, lean, "use", "skillsync"); r.code != 0 {
					errs <- r.stderr
					return
				}
			}
		}()
	}
	// A curation among the writers must lose no increment.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 5; i++ {
			if r := runProcess(t, ws, lean, "curate", "--force"); r.code != 0 {
				errs <- r.stderr
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if got := usageOf(t, ws)["marketplace:builtin/skillsync"].UseCount; got != procs*calls {
		t.Errorf("use_count = %d, want %d", got, procs*calls)
	}
}

func TestUseUnknownAndCorruptUsage(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := run(t, ws, "use", "skilsync"); r.code != 1 || !strings.Contains(r.stderr, "did you mean skillsync") {
		t.Errorf("unknown name: %d %s", r.code, r.stderr)
	}
	skilltest.WriteFile(t, filepath.Join(ws, "skills", ".usage.json"), `{"version":1,"skills":`)
	r := run(t, ws, "use", "--view", "skillsync")
	if r.code != 0 || !strings.Contains(r.stderr, "warning: ") || !strings.Contains(r.stderr, ".usage.json.corrupt-") {
		t.Errorf("corrupt usage: %d %s", r.code, r.stderr)
	}
	// Read once, under the lock, to count the use: one warning, not a
	// second from a read for the catalog's states, which a use needs not.
	if n := strings.Count(r.stderr, "warning: "); n != 1 {
		t.Errorf("corrupt usage: %d warnings, want 1:\n%s", n, r.stderr)
	}
	backups, _ := filepath.Glob(filepath.Join(ws, "skills", ".usage.json.corrupt-*"))
	if len(backups) != 1 {
		t.Fatalf("backups = %v", backups)
	}
	if data, _ := os.ReadFile(backups[0]); string(data) != `{"version":1,"skills":` {
		t.Errorf("backup = %q", data)
	}
}

func TestCurateCLI(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	skilltest.Skill(t, filepath.Join(ws, "skills"), "notes", "Notes.", nil)
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	future := time.Now().UTC().Add(45 * 24 * time.Hour).Format(time.RFC3339)
	dry := decode[struct {
		Checked int
		Changes []struct{ Name, From, To, Reason string }
		Skipped string
	}](t, run(t, ws, "curate", "--dry-run", "--now", future, "--json"))
	if dry.Checked != 3 || len(dry.Changes) != 3 || dry.Changes[0].To != "stale" {
		t.Errorf("dry run = %+v", dry)
	}
	if r := run(t, ws, "list"); strings.Contains(r.stdout, "(stale)") {
		t.Errorf("a dry run changed state:\n%s", r.stdout)
	}
	later := time.Now().UTC().Add(100 * 24 * time.Hour).Format(time.RFC3339)
	if r := run(t, ws, "pin", "skillsync"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	// Until some use is recorded, curation archives nothing.
	if r := run(t, ws, "curate", "--dry-run", "--now", later, "--json"); r.code != 0 || !strings.Contains(r.stdout, `"archive_held": "no usage has ever been recorded`) {
		t.Fatalf("curate without usage: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, ws, "use", "skillsync"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := run(t, ws, "curate", "--now", later); r.code != 0 || !strings.Contains(r.stdout, "notes: active -> archived") {
		t.Fatalf("curate: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, ws, "list"); strings.Contains(r.stdout, "notes") || strings.Contains(r.stdout, "writing-skills") {
		t.Errorf("archived skills are listed:\n%s", r.stdout)
	}
	all := run(t, ws, "list", "--all")
	if !strings.Contains(all.stdout, "notes (archived)") || !strings.Contains(all.stdout, "writing-skills (archived)") {
		t.Errorf("list --all:\n%s", all.stdout)
	}
	if r := run(t, ws, "search", "--all", "--json", "writing"); !strings.Contains(r.stdout, `"state": "archived"`) {
		t.Errorf("search --all:\n%s", r.stdout)
	}
	if r := run(t, ws, "prompt"); strings.Contains(r.stdout, "writing-skills") {
		t.Error("an archived skill is in the prompt")
	}
	// The next sync takes the archived marketplace skill out of the cache:
	// show and read say so rather than fail on files that are not there.
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	if r := run(t, ws, "show", "writing-skills"); r.code != 0 || !strings.Contains(r.stdout, "skillsync restore writing-skills brings them back") {
		t.Errorf("show of an archived marketplace skill: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, ws, "show", "--json", "writing-skills"); r.code != 0 || !strings.Contains(r.stdout, `"files": []`) {
		t.Errorf("show --json of an archived marketplace skill: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, ws, "read", "writing-skills"); r.code != 1 || !strings.Contains(r.stderr, "skill writing-skills is archived") {
		t.Errorf("read of an archived marketplace skill: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, verb := range []string{"use", "pin", "read", "show"} {
		if r := run(t, ws, verb, "notes"); r.code != 1 || !strings.Contains(r.stderr, "skill notes is archived: skillsync restore notes makes it active again") {
			t.Errorf("%s of an archived local skill: %d %s", verb, r.code, r.stderr)
		}
	}
	if r := run(t, ws, "restore", "notes"); r.code != 0 {
		t.Fatalf("restore: %s", r.stderr)
	}
	if r := run(t, ws, "restore", "notes"); r.code != 1 || !strings.Contains(r.stderr, "no archived skill") {
		t.Errorf("restoring twice: %d %s", r.code, r.stderr)
	}
	if r := run(t, ws, "audit", "--op", "archive"); r.code != 2 || !strings.Contains(r.stderr, `--op "archive" is no op of the audit log; the ops are stale, archived,`) {
		t.Errorf("audit --op of no op: %d %s", r.code, r.stderr)
	}
	audit := run(t, ws, "audit", "--op", "archived")
	if !strings.Contains(audit.stdout, "archived") || !strings.Contains(audit.stdout, "notes") || strings.Contains(audit.stdout, "restored") {
		t.Errorf("audit --op archived:\n%s", audit.stdout)
	}
	if r := run(t, ws, "audit", "--json", "--since", "2000-01-01"); !strings.Contains(r.stdout, `"op": "pinned"`) || !strings.Contains(r.stdout, `"op": "added"`) {
		t.Errorf("audit --json:\n%s", r.stdout)
	}
}

// staleWorkspace is a synced workspace curated as if 40 days had passed
// since, so its built-in skills, never used, are stale.
func staleWorkspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	later := time.Now().UTC().Add(40 * 24 * time.Hour).Format(time.RFC3339)
	if r := run(t, ws, "curate", "--now", later); r.code != 0 {
		t.Fatal(r.stderr)
	}
	return ws
}

func TestStaleSkillsInPrompt(t *testing.T) {
	t.Parallel()
	ws := staleWorkspace(t)
	if r := run(t, ws, "list"); !strings.Contains(r.stdout, "skillsync (stale)") {
		t.Errorf("list does not mark stale skills:\n%s", r.stdout)
	}
	if r := run(t, ws, "prompt"); !strings.Contains(r.stdout, "<name>\nskillsync\n</name>") {
		t.Error("a stale skill left the prompt without --exclude-stale")
	}
	if r := run(t, ws, "prompt", "--exclude-stale"); strings.Contains(r.stdout, "<name>\nskillsync\n</name>") {
		t.Error("--exclude-stale kept a stale skill")
	}
}

// daemonProc runs skillsync daemon and collects its JSON log lines.
type daemonProc struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []map[string]any
	done  chan struct{}
}

func startDaemon(t *testing.T, ws string) *daemonProc {
	t.Helper()
	cmd := exec.Command(binary(t), "daemon")
	cmd.Dir = ws
	cmd.Env = environ(t, nil)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &daemonProc{cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(d.done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				m = map[string]any{"msg": "unparsed: " + sc.Text()}
			}
			d.mu.Lock()
			d.lines = append(d.lines, m)
			d.mu.Unlock()
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-d.done
		_ = cmd.Wait()
	})
	return d
}

// count counts log lines with msg and, when job is set, that job.
func (d *daemonProc) count(msg, job string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, l := range d.lines {
		if l["msg"] == msg && (job == "" || l["job"] == job) {
			n++
		}
	}
	return n
}

// countSince is count of the lines logged at since or later.
func (d *daemonProc) countSince(msg, job string, since time.Time) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, l := range d.lines {
		at, _ := l["time"].(string)
		when, err := time.Parse(time.RFC3339Nano, at)
		if err == nil && !when.Before(since) && l["msg"] == msg && (job == "" || l["job"] == job) {
			n++
		}
	}
	return n
}

func (d *daemonProc) dump() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var b strings.Builder
	for _, l := range d.lines {
		fmt.Fprintln(&b, l)
	}
	return b.String()
}

func waitFor(t *testing.T, d *daemonProc, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s; daemon log:\n%s", what, d.dump())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestDaemonFollowsUpstreamWithinTwoTicks(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/first", "First.")
	up.Commit("first")
	ws := t.TempDir()
	config := "repositories:\n  - name: team\n    git: " + up.URL() + "\nschedule:\n  sync: \"@every 1s\"\n"
	if err := os.WriteFile(filepath.Join(ws, "skillsync.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, ws)
	waitFor(t, d, "the first sync", func() bool { return d.count("job done", "sync") >= 1 })
	if _, err := os.Stat(filepath.Join(ws, ".skills-cache", "team", "first", "SKILL.md")); err != nil {
		t.Fatalf("the first sync did not materialize: %v", err)
	}
	up.Skill("skills/second", "Second.")
	// Counted by the log's own times: the lines are read as they come, and
	// may come late on a loaded machine.
	committed := time.Now()
	up.Commit("second")
	target := filepath.Join(ws, ".skills-cache", "team", "second", "SKILL.md")
	waitFor(t, d, "the new commit in the cache", func() bool { _, err := os.Stat(target); return err == nil })
	waitFor(t, d, "the log of the sync that brought it", func() bool { return d.countSince("job done", "sync", committed) >= 1 })
	// A sync may have been running when the commit landed; the next one
	// must bring it.
	if ticks := d.countSince("job done", "sync", committed); ticks > 2 {
		t.Errorf("the commit took %d sync runs to arrive, want at most 2", ticks)
	}
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-d.done
	if err := d.cmd.Wait(); err != nil {
		t.Errorf("daemon exit after SIGTERM: %v", err)
	}
}

func TestDaemonSIGTERMDuringSync(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	refs := map[string]string{}
	for f := 0; f < 8; f++ {
		refs[fmt.Sprintf("ref-%d.md", f)] = strings.Repeat("x", 4096)
	}
	for i := 0; i < 400; i++ {
		skilltest.Skill(t, filepath.Join(ws, "big"), fmt.Sprintf("skill-%03d", i), fmt.Sprintf("Skill %d.", i), refs)
	}
	config := "repositories:\n  - name: big\n    dir: big\n"
	if err := os.WriteFile(filepath.Join(ws, "skillsync.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, ws)
	waitFor(t, d, "the daemon to start", func() bool { return d.count("daemon started", "") == 1 })
	// Stop the first sync in the middle: once it is building skills in
	// the staging area, before any is swapped in.
	staging := filepath.Join(ws, ".skills-cache", ".staging")
	waitFor(t, d, "the first sync to stage skills", func() bool {
		entries, _ := os.ReadDir(staging)
		return len(entries) > 0
	})
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-d.done
	if err := d.cmd.Wait(); err != nil {
		t.Fatalf("daemon exit after SIGTERM: %v\n%s", err, d.dump())
	}
	if d.count("daemon stopped", "") != 1 {
		t.Errorf("no clean stop logged:\n%s", d.dump())
	}
	// Nothing half-written: the cache holds the source whole, or (the
	// sync stopped before its commit) not at all.
	unsynced := "unsynced " + filepath.Join(ws, ".skills-cache", "big") + "\n"
	if r := run(t, ws, "verify"); (r.code != 0 || r.stdout != "") && (r.code != 1 || r.stdout != unsynced) {
		t.Errorf("verify after SIGTERM: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Errorf("the next sync: %d %s", r.code, r.stderr)
	}
	if r := run(t, ws, "verify"); r.code != 0 {
		t.Errorf("verify after the next sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestDaemonBadScheduleExits2(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "skillsync.yaml"), []byte("schedule:\n  curate: \"at three\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, ws, "daemon")
	if r.code != 2 || !strings.Contains(r.stderr, `schedule.curate "at three" does not parse`) {
		t.Errorf("bad schedule: %d %s", r.code, r.stderr)
	}
}

func TestDaemonSIGHUPReloads(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	config := filepath.Join(ws, "skillsync.yaml")
	if err := os.WriteFile(config, []byte("schedule:\n  sync: \"@every 1h\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, ws)
	waitFor(t, d, "the first sync", func() bool { return d.count("job done", "sync") == 1 })

	if err := os.WriteFile(config, []byte("schedule:\n  sync: [not, a, string]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, d, "the failed reload", func() bool { return d.count("reload failed; keeping the old config", "") == 1 })

	if err := os.WriteFile(config, []byte("schedule:\n  sync: \"@every 1s\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, d, "the reload", func() bool { return d.count("config reloaded", "") == 1 })
	// The new schedule runs: syncs every second instead of every hour.
	waitFor(t, d, "a sync on the new schedule", func() bool { return d.count("job done", "sync") >= 2 })
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-d.done
	if err := d.cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v", err)
	}
}

// TestASourceWhollyArchivedIsNotEmpty: a source all of whose skills are
// archived yields skills all the same; the sync must not tell the user to
// set path: to find them.
func TestASourceWhollyArchivedIsNotEmpty(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{
		"team/a/SKILL.md": "---\nname: a\ndescription: The a skill.\n---\nBody.\n",
		"skillsync.yaml":  "repositories:\n  - name: team\n    dir: team\n",
	})
	later := time.Now().UTC().Add(200 * 24 * time.Hour).Format(time.RFC3339)
	for _, args := range [][]string{{"sync"}, {"use", "a"}, {"curate", "--now", later}} {
		if r := run(t, ws, args...); r.code != 0 {
			t.Fatalf("%v: %d %s", args, r.code, r.stderr)
		}
	}
	for range 2 { // the sync that takes it out, and one that finds the source current
		if r := run(t, ws, "sync"); r.code != 0 || strings.Contains(r.stderr, "yields no skills") {
			t.Errorf("sync of a source wholly archived: %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	}
}

// TestARenamedSourceSaysWhereItsUsageStayed: usage, pins and archive
// states are kept by source name; a source renamed in the config starts
// without them, and the sync that first meets the new name says so,
// naming the config file and the entry's line.
func TestARenamedSourceSaysWhereItsUsageStayed(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{
		"team/a/SKILL.md": "---\nname: a\ndescription: The a skill.\n---\nBody.\n",
		"skillsync.yaml":  "repositories:\n  - name: team\n    dir: team\n",
	})
	for _, args := range [][]string{{"sync"}, {"pin", "a"}} {
		if r := run(t, ws, args...); r.code != 0 {
			t.Fatalf("%v: %d %s", args, r.code, r.stderr)
		}
	}
	writeTree(t, ws, map[string]string{"skillsync.yaml": "repositories:\n  - name: ours\n    dir: team\n"})
	r := run(t, ws, "sync")
	if r.code != 0 || !strings.Contains(r.stderr, "skillsync.yaml:2: source ours reads what source team read: the usage, pins and archive states of its skills stay recorded under team") {
		t.Errorf("sync after the rename: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, ws, "sync"); r.code != 0 || strings.Contains(r.stderr, "reads what source") {
		t.Errorf("the next sync: %d\n%s", r.code, r.stderr)
	}
}

// restore --source brings skills back into a postgres source only: for a
// git or a folder source it is a usage error (exit 2) that says what
// undoes that source's retirement, and changes nothing.
func TestRestoreSourceRefusesOtherKinds(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/a", "The a skill.")
	up.Commit("one")
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{
		"local/b/SKILL.md": "---\nname: b\ndescription: The b skill.\n---\nBody.\n",
		"skillsync.yaml":   "repositories:\n  - name: team\n    git: " + up.URL() + "\n  - name: local\n    dir: local\n",
	})
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	for _, tc := range []struct{ source, skill, says string }{
		{"team", "a", "a git source's retirement is a commit upstream: revert it there"},
		{"local", "b", "local is a dir source"},
	} {
		r := run(t, ws, "restore", "--source", tc.source, tc.skill)
		if r.code != 2 || !strings.Contains(r.stderr, tc.says) {
			t.Errorf("restore --source %s %s: exit %d, %q; want exit 2 and %q", tc.source, tc.skill, r.code, r.stderr, tc.says)
		}
	}
}

// TestArchivingLeavesTheTeamsLock: curation is this machine's, the lock
// the team's: a marketplace skill archived here stays in skillsync.lock
// with its hash, on the sync after curate and after upstream moves, so a
// fresh checkout's sync --frozen passes, and verify here is clean.
func TestArchivingLeavesTheTeamsLock(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/pdf", "Read PDFs.")
	up.Skill("skills/notes", "Take notes.")
	up.Commit("one")
	ws := t.TempDir()
	config := "repositories:\n  - name: team\n    git: " + up.URL() + "\n  - name: local\n    dir: local\n"
	writeTree(t, ws, map[string]string{"skillsync.yaml": config, "local/mine/SKILL.md": "---\nname: mine\ndescription: Mine.\n---\nBody.\n"})
	archiveIdle(t, ws, true)
	frozenElsewhere := func(when string) {
		t.Helper()
		if _, err := os.Stat(filepath.Join(ws, ".skills-cache", "team", "pdf")); err == nil {
			t.Fatalf("%s: pdf is still cached here; the test archives nothing", when)
		}
		lock, err := os.ReadFile(filepath.Join(ws, "skillsync.lock"))
		if err != nil || !strings.Contains(string(lock), `"pdf"`) {
			t.Fatalf("%s: the lock lost pdf: %v\n%s", when, err, lock)
		}
		if r := run(t, ws, "verify"); r.code != 0 {
			t.Errorf("%s: verify here: %d\n%s%s", when, r.code, r.stdout, r.stderr)
		}
		fresh := t.TempDir()
		writeTree(t, fresh, map[string]string{"skillsync.yaml": config, "skillsync.lock": string(lock)})
		if err := os.CopyFS(filepath.Join(fresh, "local"), os.DirFS(filepath.Join(ws, "local"))); err != nil {
			t.Fatal(err)
		}
		if r := run(t, fresh, "sync", "--frozen"); r.code != 0 {
			t.Errorf("%s: sync --frozen of the lock elsewhere: %d\n%s%s", when, r.code, r.stdout, r.stderr)
		}
	}
	frozenElsewhere("archived")
	// Another source changes: the lock is written again, the team source
	// not read.
	writeTree(t, ws, map[string]string{"local/more/SKILL.md": "---\nname: more\ndescription: More.\n---\nBody.\n"})
	if r := run(t, ws, "sync"); r.code != 0 || !strings.Contains(r.stdout, "team") {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	frozenElsewhere("archived, another source changed")
	up.Skill("skills/pdf", "Read PDFs, and fill their forms.")
	up.Commit("two")
	if r := run(t, ws, "update"); r.code != 0 {
		t.Fatalf("update: %d %s", r.code, r.stderr)
	}
	frozenElsewhere("archived, and changed upstream")
}

// TestRestoreWhileTheSourceCannotBeRead: restoring a marketplace skill
// archived out of the cache while its source cannot be read makes it
// active, says its files could not be brought back (exit 3), and puts no
// empty folder in the targets; the next sync that reads the source
// brings it.
func TestRestoreWhileTheSourceCannotBeRead(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{
		"src/pdf/SKILL.md":   "---\nname: pdf\ndescription: Read PDFs.\n---\nBody.\n",
		"src/notes/SKILL.md": "---\nname: notes\ndescription: Take notes.\n---\nBody.\n",
		"skillsync.yaml":     "repositories:\n  - name: team\n    dir: src\ntargets:\n  - dir: out\n",
	})
	archiveIdle(t, ws, true)
	if _, err := os.Stat(filepath.Join(ws, "out", "pdf")); err == nil {
		t.Fatal("pdf is still placed; the test archives nothing")
	}
	if err := os.Rename(filepath.Join(ws, "src"), filepath.Join(ws, "src.away")); err != nil {
		t.Fatal(err)
	}
	r := run(t, ws, "restore", "pdf")
	if r.code != 3 || !strings.Contains(r.stderr, "pdf is active again, but source team could not be read") {
		t.Errorf("restore with the source away: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "out", "pdf")); err == nil {
		t.Error("restore placed a pdf folder with no files of it")
	}
	if r := run(t, ws, "verify"); r.code != 0 {
		t.Errorf("verify: %d %s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, ws, "list", "--all"); !strings.Contains(r.stdout, "pdf (unsynced)") {
		t.Errorf("list --all:\n%s", r.stdout)
	}
	if r := run(t, ws, "read", "pdf"); r.code != 1 || !strings.Contains(r.stderr, "skill pdf is restored, and its files are not in the cache yet: skillsync sync brings them back") {
		t.Errorf("read: %d %s", r.code, r.stderr)
	}
	if err := os.Rename(filepath.Join(ws, "src.away"), filepath.Join(ws, "src")); err != nil {
		t.Fatal(err)
	}
	if r := run(t, ws, "sync"); r.code != 0 || !fileExists(filepath.Join(ws, "out", "pdf", "SKILL.md")) {
		t.Errorf("the sync after: %d %s", r.code, r.stderr)
	}
}

// TestCurateAndRestoreOfAGitSkillAtOnce: curating a git source's skill
// archived takes it out of the targets at once, and restore brings it
// back at once (exit 0), offline, from the commit a plain sync fetched.
func TestCurateAndRestoreOfAGitSkillAtOnce(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/pdf", "Read PDFs.")
	up.Skill("skills/notes", "Take notes.")
	up.Commit("one")
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{"skillsync.yaml": "repositories:\n  - name: team\n    git: " + up.URL() + "\ntargets:\n  - dir: out\n"})
	later := time.Now().UTC().Add(200 * 24 * time.Hour).Format(time.RFC3339)
	for _, args := range [][]string{{"sync"}, {"use", "notes"}, {"pin", "notes"}, {"curate", "--now", later}, {"sync"}} {
		if r := run(t, ws, args...); r.code != 0 {
			t.Fatalf("%v: %d %s", args, r.code, r.stderr)
		}
	}
	if fileExists(filepath.Join(ws, "out", "pdf", "SKILL.md")) {
		t.Error("the archived pdf is still in the target")
	}
	for range 2 { // restored, archived again, restored again
		if r := run(t, ws, "restore", "pdf"); r.code != 0 || !fileExists(filepath.Join(ws, "out", "pdf", "SKILL.md")) {
			t.Fatalf("restore pdf: %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if r := run(t, ws, "curate", "--now", later); r.code != 0 || fileExists(filepath.Join(ws, "out", "pdf", "SKILL.md")) {
			t.Fatalf("curate left the archived pdf in the target: %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	}
}

// TestAnArchivedSkillACutReadDidNotReachStaysArchived: a skill archived
// here that a read cut at max_entries did not reach stays archived (list
// --all) and in the lock, as the skills the cut did not reach keep their
// copies.
func TestAnArchivedSkillACutReadDidNotReachStaysArchived(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	for _, name := range []string{"a", "b", "c", "d", "zz"} {
		up.Skill("skills/"+name, "The "+name+" skill.")
	}
	up.Commit("one")
	ws := t.TempDir()
	text := "repositories:\n  - name: team\n    git: " + up.URL() + "\n"
	writeTree(t, ws, map[string]string{"skillsync.yaml": text})
	later := time.Now().UTC().Add(200 * 24 * time.Hour).Format(time.RFC3339)
	steps := [][]string{{"sync"}, {"use", "a"}}
	for _, name := range []string{"a", "b", "c", "d"} {
		steps = append(steps, []string{"pin", name})
	}
	for _, args := range append(steps, []string{"curate", "--now", later}, []string{"sync"}) {
		if r := run(t, ws, args...); r.code != 0 {
			t.Fatalf("%v: %d %s", args, r.code, r.stderr)
		}
	}
	writeTree(t, ws, map[string]string{"skillsync.yaml": "max_entries: 8\n" + text})
	if r := run(t, ws, "sync"); r.code != 3 {
		t.Fatalf("sync cut at max_entries: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if lock, _ := os.ReadFile(filepath.Join(ws, "skillsync.lock")); !strings.Contains(string(lock), `"zz"`) {
		t.Errorf("the lock lost the archived zz:\n%s", lock)
	}
	if r := run(t, ws, "list", "--all"); !strings.Contains(r.stdout, "zz (archived)") {
		t.Errorf("list --all:\n%s", r.stdout)
	}
}

// TestAnUnreadableUsageFileLeavesArchivedSkillsArchived: while the usage
// file cannot be read, a marketplace skill archived out of the cache is
// shown archived, as the cache left it, not restored.
func TestAnUnreadableUsageFileLeavesArchivedSkillsArchived(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{
		"src/pdf/SKILL.md":   "---\nname: pdf\ndescription: Read PDFs.\n---\nBody.\n",
		"src/notes/SKILL.md": "---\nname: notes\ndescription: Take notes.\n---\nBody.\n",
		"skillsync.yaml":     "repositories:\n  - name: team\n    dir: src\n",
	})
	archiveIdle(t, ws, false)
	writeTree(t, ws, map[string]string{"skills/.usage.json": "garbage"})
	if r := run(t, ws, "list", "--all"); !strings.Contains(r.stdout, "pdf (archived)") {
		t.Errorf("list --all with the usage corrupt:\n%s%s", r.stdout, r.stderr)
	}
	if r := run(t, ws, "read", "pdf"); r.code != 1 || !strings.Contains(r.stderr, "skill pdf is archived") {
		t.Errorf("read pdf with the usage corrupt: %d %s", r.code, r.stderr)
	}
}

// lateWorkspace is a synced workspace whose skill notes was used, with
// a skill late added since, never synced: a curation is the first to see
// it.
func lateWorkspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	skilltest.Skill(t, filepath.Join(ws, "skills"), "notes", "Notes.", nil)
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := run(t, ws, "use", "notes"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	skilltest.Skill(t, filepath.Join(ws, "skills"), "late", "Late.", nil)
	return ws
}

// TestCurateNowDatesByTheClock: curate --now judges idle time at the
// time given, but what it writes is dated by the clock. Dated at a later
// --now, a stale skill used since would not come back until that date,
// a skill first seen by the curation would start its idle time there,
// and the last run and the audit would lie ahead of the clock.
func TestCurateNowDatesByTheClock(t *testing.T) {
	t.Parallel()
	ws := lateWorkspace(t)
	later := time.Now().UTC().Add(100 * 24 * time.Hour)
	if r := run(t, ws, "curate", "--now", later.Format(time.RFC3339)); r.code != 0 || !strings.Contains(r.stdout, "notes: active -> archived") {
		t.Fatalf("curate: %d %s %s", r.code, r.stdout, r.stderr)
	}
	clock := time.Now().UTC().Add(time.Minute)
	data, err := os.ReadFile(filepath.Join(ws, "skills", ".usage.json"))
	if err != nil {
		t.Fatal(err)
	}
	var u struct {
		Skills  map[string]map[string]any
		Curator struct {
			LastRunAt time.Time `json:"last_run_at"`
		}
	}
	if err := json.Unmarshal(data, &u); err != nil {
		t.Fatal(err)
	}
	if _, ok := u.Skills["workspace/late"]; !ok {
		t.Fatalf("the curation did not see late: %s", data)
	}
	for name, rec := range u.Skills {
		for _, field := range []string{"first_seen_at", "state_since"} {
			if s, ok := rec[field].(string); ok {
				if at, err := time.Parse(time.RFC3339, s); err != nil || at.After(clock) {
					t.Errorf("%s %s = %s, after the clock", name, field, s)
				}
			}
		}
	}
	if u.Curator.LastRunAt.After(clock) {
		t.Errorf("last_run_at = %s, after the clock", u.Curator.LastRunAt)
	}
	if _, err := os.Stat(filepath.Join(ws, "skills", ".audit", later.Format("2006-01-02")+".jsonl")); err == nil {
		t.Error("the audit wrote a day file dated by --now")
	}
	archived, _ := filepath.Glob(filepath.Join(ws, "skills", ".archive", "notes-*"))
	if len(archived) != 1 || strings.Contains(filepath.Base(archived[0]), later.Format("20060102")) {
		t.Errorf("archived copies of notes: %v", archived)
	}
	// late, first seen by that curation, was not judged by it: idle from
	// the clock, --now would have found it idle for a hundred days, which
	// the same command with --dry-run (which sees nothing first) did not.
	if _, err := os.Stat(filepath.Join(ws, "skills", "late", "SKILL.md")); err != nil || u.Skills["workspace/late"]["state"] != "active" {
		t.Errorf("late after the curation that first saw it: %v %v", u.Skills["workspace/late"], err)
	}
}

// TestCurateNowDryRunShowsTheRun: curate --now --dry-run plans what the
// same command without --dry-run does, a skill it sees first included.
func TestCurateNowDryRunShowsTheRun(t *testing.T) {
	t.Parallel()
	ws := lateWorkspace(t)
	later := time.Now().UTC().Add(100 * 24 * time.Hour).Format(time.RFC3339)
	type plan struct {
		Checked int
		Changes []struct{ Name, To string }
	}
	dry := decode[plan](t, run(t, ws, "curate", "--dry-run", "--json", "--now", later))
	real := decode[plan](t, run(t, ws, "curate", "--json", "--now", later))
	if dry.Checked != real.Checked || fmt.Sprint(dry.Changes) != fmt.Sprint(real.Changes) {
		t.Errorf("dry run %+v, run %+v", dry, real)
	}
}

// archiveIdle syncs ws, uses and pins notes, and curates 200 days on, so
// that every other skill is archived; with resync, a sync follows.
func archiveIdle(t *testing.T, ws string, resync bool) {
	t.Helper()
	later := time.Now().UTC().Add(200 * 24 * time.Hour).Format(time.RFC3339)
	steps := [][]string{{"sync"}, {"use", "notes"}, {"pin", "notes"}, {"curate", "--now", later}}
	if resync {
		steps = append(steps, []string{"sync"})
	}
	for _, args := range steps {
		if r := run(t, ws, args...); r.code != 0 {
			t.Fatalf("%v: %d %s", args, r.code, r.stderr)
		}
	}
}

// TestDaemonWithoutItsConfig: a reload while the config file is gone
// keeps the old config, not the built-in default found in its place; and
// once the workspace is deleted, the daemon's jobs fail saying so rather
// than build a new workspace where it was.
func TestDaemonWithoutItsConfig(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/first", "First.")
	up.Commit("first")
	ws := filepath.Join(t.TempDir(), "ws")
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: team\n    git: "+up.URL()+"\nschedule:\n  sync: \"@every 1s\"\n")
	d := startDaemon(t, ws)
	waitFor(t, d, "the first sync", func() bool { return d.count("job done", "sync") >= 1 })
	if err := os.Remove(filepath.Join(ws, "skillsync.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, d, "the reload to fail", func() bool { return d.count("reload failed; keeping the old config", "") >= 1 })
	if fileExists(filepath.Join(ws, ".skills-cache", "builtin")) {
		t.Error("the reload took the built-in default for the config that is gone")
	}
	if err := os.RemoveAll(ws); err != nil {
		t.Fatal(err)
	}
	gone := func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		for _, l := range d.lines {
			if e, _ := l["error"].(string); l["msg"] == "job failed" && strings.Contains(e, "is gone (was the workspace moved or deleted?)") {
				return true
			}
		}
		return false
	}
	waitFor(t, d, "a job to say the config is gone", gone)
	time.Sleep(1500 * time.Millisecond) // a tick more
	if _, err := os.Lstat(ws); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the daemon built the deleted workspace again: %v", err)
	}
}

// TestCurateImportsFirst: a skill an agent used since the last import is
// not taken for idle: curate imports the agents' records first, so the
// use counts and the skill stays active. Curated before the import, the
// skill was archived, and the import then could not record its use.
func TestCurateImportsFirst(t *testing.T) {
	t.Parallel()
	ws, projects := claudeWorkspace(t)
	cfgFile := filepath.Join(ws, "skillsync.yaml")
	skilltest.WriteFile(t, cfgFile, skilltest.ReadFile(t, cfgFile)+"curator:\n  stale_after: 45m\n  archive_after: 1h\n  min_idle: 10m\n")
	if r := run(t, ws, "pin", "skillsync"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := run(t, ws, "use", "skillsync"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	now := time.Now().UTC()
	used := now.Add(90 * time.Minute).Format(time.RFC3339)
	skilltest.AppendLines(t, filepath.Join(projects, "s.jsonl"), toolLine(used, ws, "Skill", `{"skill":"writing-skills"}`))
	later := now.Add(2 * time.Hour).Format(time.RFC3339)

	// A dry run imports nothing, and says what that means.
	dry := run(t, ws, "curate", "--dry-run", "--now", later)
	if dry.code != 0 || !strings.Contains(dry.stderr, "the agents' records were not imported") {
		t.Errorf("dry run: %d %s %s", dry.code, dry.stdout, dry.stderr)
	}
	r := run(t, ws, "curate", "--now", later)
	if r.code != 0 || strings.Contains(r.stdout, "writing-skills:") {
		t.Fatalf("curate: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if u := usageOf(t, ws)["marketplace:builtin/writing-skills"]; u.UseCount != 1 || u.LastSource != "import" {
		t.Errorf("writing-skills's usage = %+v", u)
	}
	if l := run(t, ws, "list"); !strings.Contains(l.stdout, "writing-skills") {
		t.Errorf("writing-skills is not listed:\n%s", l.stdout)
	}
}
