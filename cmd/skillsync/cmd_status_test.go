package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/internal/flock"
	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/materialize"
)

// TestStatusNamesAFailingSource: with a daemon over a git remote, status
// says all is well (exit 0) and which daemon holds the workspace; once the
// remote is gone and the daemon's sync failed, status --json names the
// source and its error and exits 1.
func TestStatusNamesAFailingSource(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, "main")
	repo.Skill("pdf", "Read PDF files.")
	repo.Commit("one")
	_, url := repo.ServeHTTP("skills", "", "")
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: team\n    git: "+url+"\n    timeout: 10s\n"+
		"schedule:\n  sync: \"@every 1s\"\n")
	d := startDaemon(t, ws)
	waitFor(t, d, "the first sync", func() bool { return d.count("job done", "sync") >= 1 })

	r := run(t, ws, "status", "--json")
	st := decode[skillsync.WorkspaceStatus](t, r)
	if r.code != 0 || len(st.Attention) != 0 || len(st.Sources) != 1 || st.Sources[0].Revision != repo.Head() || st.Sources[0].SyncedAt == nil {
		t.Fatalf("status of a healthy workspace: exit %d %+v\n%s", r.code, st, r.stderr)
	}
	if st.Daemon == nil || st.Daemon.PID != d.cmd.Process.Pid {
		t.Errorf("status does not see the daemon (pid %d): %+v", d.cmd.Process.Pid, st.Daemon)
	}
	if r := run(t, ws, "status"); r.code != 0 || !strings.Contains(r.stdout, "daemon    pid") || !strings.Contains(r.stdout, "team") {
		t.Errorf("status: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	if err := os.Rename(repo.Dir, repo.Dir+".gone"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		r = run(t, ws, "status", "--json")
		st = decode[skillsync.WorkspaceStatus](t, r)
		if st.Sources[0].Error != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never named the failing source:\n%s", r.stdout)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if r.code != 1 || len(st.Attention) != 1 || !strings.Contains(st.Attention[0], "source team fails") || st.Sources[0].Moved != nil {
		t.Errorf("status with a failing source: exit %d, attention %q, upstream moved %v", r.code, st.Attention, st.Sources[0].Moved)
	}
	// Asked now, an upstream that cannot be reached has neither moved nor
	// stayed.
	r = run(t, ws, "status", "--check", "--json")
	if st = decode[skillsync.WorkspaceStatus](t, r); st.Sources[0].Error == "" || st.Sources[0].Moved != nil {
		t.Errorf("status --check of a source that cannot be reached: %+v", st.Sources[0])
	}
}

// TestDaemonListenInUseExits2: an address in use ends the daemon with
// exit 2 and a message naming it.
func TestDaemonListenInUseExits2(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: local\n    dir: "+t.TempDir()+"\n")
	r := runProcess(t, ws, nil, "daemon", "--listen", ln.Addr().String())
	if r.code != exitUsage || !strings.Contains(r.stderr, ln.Addr().String()) {
		t.Errorf("daemon on an address in use: exit %d, stderr %s", r.code, r.stderr)
	}
}

// TestLogFormatJSON: --log-format json makes a command's warnings and
// its error JSON lines (log/slog's), text the default; another value is
// bad usage.
func TestLogFormatJSON(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: local\n    dir: "+t.TempDir()+"\n")
	jsonLines := func(want string, args ...string) {
		t.Helper()
		r := run(t, ws, args...)
		if r.code == 0 {
			t.Fatalf("%v succeeded: %s", args, r.stdout)
		}
		found := false
		for _, l := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
			var line struct{ Level, Msg string }
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Errorf("%v: not a JSON line: %v: %s", args, err, l)
			}
			found = found || (line.Level == "ERROR" && strings.Contains(line.Msg, want))
		}
		if !found {
			t.Errorf("%v: no JSON error line says %q:\n%s", args, want, r.stderr)
		}
	}
	jsonLines("nope", "show", "nope", "--log-format", "json")
	// What a sync and an unknown command say of a failure too.
	gone := filepath.Join(ws, "gone")
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: local\n    dir: "+gone+"\n")
	jsonLines("source local failed", "--log-format", "json", "sync")
	jsonLines(`unknown command "bogus"`, "--log-format=json", "bogus")
	if r := run(t, ws, "show", "nope"); !strings.Contains("\n"+r.stderr, "\nskillsync: ") || strings.Contains(r.stderr, `"level"`) {
		t.Errorf("text is not the default: %s", r.stderr)
	}
	if r := run(t, ws, "list", "--log-format", "xml"); r.code != exitUsage {
		t.Errorf("--log-format xml: exit %d %s", r.code, r.stderr)
	}
}

// TestStatusCountsOneEditedFile: a target with one file edited by hand is
// one file that differs, in the table and in what needs a person.
func TestStatusCountsOneEditedFile(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, "main")
	repo.Skill("pdf", "Read PDF files.")
	repo.Write("pdf/notes.md", "notes\n", 0)
	repo.Commit("one")
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "targets:\n  - dir: .claude/skills\nrepositories:\n  - name: team\n    git: "+repo.URL()+"\n")
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %d\n%s", r.code, r.stderr)
	}
	skilltest.WriteFile(t, filepath.Join(ws, ".claude", "skills", "pdf", "notes.md"), "edited\n")
	r := run(t, ws, "status")
	for _, want := range []string{"1 file differs from the record", "1 file differs from its record", "verify --repair rewrites what differs"} {
		if !strings.Contains(r.stdout+r.stderr, want) {
			t.Errorf("status lacks %q:\n%s%s", want, r.stdout, r.stderr)
		}
	}
	// The fix status and verify name is one: the edit is kept aside.
	r = run(t, ws, "verify")
	if r.code != 1 || !strings.Contains(r.stderr, "verify: 1 file differs from its record: skillsync verify --repair rewrites what differs") {
		t.Errorf("verify names no fix: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, ws, "verify", "--repair"); r.code != 0 || strings.Contains(r.stderr, "verify --repair rewrites") {
		t.Errorf("verify --repair: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if entries, err := os.ReadDir(filepath.Join(ws, ".claude", "skills", materialize.ConflictsName)); err != nil || len(entries) != 1 {
		t.Errorf("the edited copy was not kept aside: %v %v", entries, err)
	}
}

// TestStatusNamesACorruptLock: a lock that cannot be read stops every
// sync, so status says so and exits 1 rather than calling all well.
func TestStatusNamesACorruptLock(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.lock"), "{")
	// Said once, with --check too, which reads the lock as well.
	for _, args := range [][]string{{"status", "--json"}, {"status", "--check", "--json"}} {
		r := run(t, ws, args...)
		st := decode[skillsync.WorkspaceStatus](t, r)
		if r.code != 1 || len(st.Attention) != 1 || !strings.Contains(st.Attention[0], "skillsync.lock is corrupt") {
			t.Errorf("%v with a corrupt lock: exit %d, attention %q", args, r.code, st.Attention)
		}
	}
}

// TestStatusNamesAPartlySyncedSource: a source the last sync brought in
// part (here its listing stopped at max_entries) needs a person.
func TestStatusNamesAPartlySyncedSource(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, "main")
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		repo.Skill("skills/"+name, "The "+name+" skill.")
	}
	repo.Commit("one")
	ws := t.TempDir()
	text := "repositories:\n  - name: team\n    git: " + repo.URL() + "\n"
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), text)
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %d\n%s", r.code, r.stderr)
	}
	if r := run(t, ws, "status"); r.code != 0 {
		t.Fatalf("status of a whole sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "max_entries: 8\n"+text)
	if r := run(t, ws, "sync"); r.code != 3 {
		t.Fatalf("sync cut at max_entries: %d\n%s", r.code, r.stderr)
	}
	if r := run(t, ws, "status"); r.code != 1 || !strings.Contains(r.stdout, "source team was partly synced") {
		t.Errorf("status of a partial sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestACorruptManifestIsRepairedNotFatal: a cache manifest that cannot be
// read is what needs a person in status (which still shows the rest), a
// corrupt difference in verify, and verify --repair sets it aside and
// rebuilds, as a sync does.
func TestACorruptManifestIsRepairedNotFatal(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, "main")
	repo.Skill("pdf", "Read PDF files.")
	repo.Commit("one")
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "targets:\n  - dir: out\nrepositories:\n  - name: team\n    git: "+repo.URL()+"\n")
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %d\n%s", r.code, r.stderr)
	}
	manifest := filepath.Join(ws, ".skills-cache", ".manifest.json")
	skilltest.WriteFile(t, manifest, "garbage")
	defer func() {
		// The sync after it finds the skill in place: its record is
		// mended, nothing is added.
		skilltest.WriteFile(t, manifest, "garbage")
		if r := run(t, ws, "sync"); r.code != 0 || !strings.Contains(r.stdout, "0 added") || !strings.Contains(r.stdout, "1 repaired") {
			t.Errorf("sync after a manifest set aside: %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	}()
	if r := run(t, ws, "status"); r.code != 1 || !strings.Contains(r.stdout, "SOURCE") || !strings.Contains(r.stdout, ".manifest.json is corrupt") {
		t.Errorf("status: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, ws, "verify"); r.code != 1 || !strings.Contains(r.stdout, "corrupt "+manifest) {
		t.Errorf("verify: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, ws, "verify", "--repair"); r.code != 0 || !strings.Contains(r.stdout, "repaired corrupt "+manifest) {
		t.Errorf("verify --repair: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, ws, "verify"); r.code != 0 {
		t.Errorf("verify after the repair: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestStatusNamesADaemonSyncThatFails: the daemon's syncs fail at a
// target (its folder is a file) though the source fetches: status says
// so and exits 1, and the source shows no success.
func TestStatusNamesADaemonSyncThatFails(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, "main")
	repo.Skill("pdf", "Read PDF files.")
	repo.Commit("one")
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: team\n    git: "+repo.URL()+"\n"+
		"targets:\n  - dir: .claude/skills\nschedule:\n  sync: \"@every 1s\"\n")
	skilltest.WriteFile(t, filepath.Join(ws, ".claude", "skills"), "not a folder")
	d := startDaemon(t, ws)
	waitFor(t, d, "a failed sync", func() bool { return d.count("job failed", "sync") >= 1 })
	r := run(t, ws, "status", "--json")
	st := decode[skillsync.WorkspaceStatus](t, r)
	if r.code != 1 || len(st.Attention) == 0 || !strings.Contains(strings.Join(st.Attention, "\n"), "the daemon's last sync failed") {
		t.Errorf("status while the daemon's syncs fail: exit %d %+v", r.code, st.Attention)
	}
	if len(st.Sources) != 1 || st.Sources[0].SyncedAt != nil {
		t.Errorf("a source synced by a sync that failed: %+v", st.Sources)
	}
}

// TestStatusNamesASkillLeftOutOfATarget: a folder of the user's stands
// where a skill would go in a target; sync leaves both alone, and status
// says so until the folder is moved away.
func TestStatusNamesASkillLeftOutOfATarget(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "targets:\n  - dir: .claude/skills\n")
	skilltest.Skill(t, filepath.Join(ws, "skills"), "notes", "Notes.", nil)
	own := filepath.Join(ws, ".claude", "skills", "notes")
	skilltest.WriteFile(t, filepath.Join(own, "mine.md"), "the user's own\n")
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	r := run(t, ws, "status", "--json")
	st := decode[skillsync.WorkspaceStatus](t, r)
	if r.code != 1 || len(st.Targets) != 1 || fmt.Sprint(st.Targets[0].Blocked) != "[notes]" ||
		!strings.Contains(strings.Join(st.Attention, "\n"), "1 skill left out") {
		t.Errorf("status with a skill left out: exit %d %+v %q", r.code, st.Targets, st.Attention)
	}
	if err := os.Rename(own, own+".mine"); err != nil {
		t.Fatal(err)
	}
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	if r := run(t, ws, "status", "--json"); r.code != 0 {
		t.Errorf("status once the folder moved away: %d %s", r.code, r.stdout)
	}
}

// TestDaemonLockTakeover: of two daemons on one workspace, status shows
// the one holding its lock; when that one stops the other takes the lock
// over, and when the lock file is removed under its holder (git clean),
// the holder takes it again rather than leave it to a newcomer.
func TestDaemonLockTakeover(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - embedded: builtin\nschedule:\n  sync: \"@every 1s\"\n")
	daemonPID := func() int {
		st := decode[skillsync.WorkspaceStatus](t, run(t, ws, "status", "--json"))
		if st.Daemon == nil {
			return 0
		}
		return st.Daemon.PID
	}
	first := startDaemon(t, ws)
	waitFor(t, first, "the first daemon's sync", func() bool { return first.count("job done", "sync") >= 1 })
	second := startDaemon(t, ws)
	waitFor(t, second, "the second daemon's warning", func() bool {
		return second.count("another daemon holds this workspace; skillsync status shows that one, and this one takes over when it stops", "") >= 1
	})
	if pid := daemonPID(); pid != first.cmd.Process.Pid {
		t.Fatalf("status shows pid %d, want the first daemon's %d", pid, first.cmd.Process.Pid)
	}
	lock := filepath.Join(ws, "skills", ".daemon.lock")
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	waitFor(t, first, "the first daemon to take its lock again", func() bool {
		return first.count("the workspace's daemon lock file was removed or replaced; taking it again", "") >= 1
	})
	if pid := daemonPID(); pid != first.cmd.Process.Pid || second.count("this daemon holds the workspace now; skillsync status shows it", "") != 0 {
		t.Fatalf("after the lock file was removed, status shows pid %d, want the first daemon's %d", pid, first.cmd.Process.Pid)
	}
	if err := first.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitFor(t, second, "the second daemon to take over", func() bool {
		return second.count("this daemon holds the workspace now; skillsync status shows it", "") >= 1
	})
	if pid := daemonPID(); pid != second.cmd.Process.Pid {
		t.Errorf("status shows pid %d, want the second daemon's %d", pid, second.cmd.Process.Pid)
	}
}

// TestStatusEscapesTheDaemonsAddress: the state file is the workspace's,
// untrusted like every record: the metrics address status reads from it
// is escaped as its errors are, so it cannot move the cursor, colour the
// terminal or forge a line of status's own ("needs a person: ...").
func TestStatusEscapesTheDaemonsAddress(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: builtin\n    embedded: builtin\n")
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %d\n%s", r.code, r.stderr)
	}
	skilltest.WriteFile(t, filepath.Join(ws, "skills", ".daemon.json"),
		`{"pid":7,"started_at":"2026-12-01T12:00:00Z","listen":"127.0.0.1:9464\u001b[2J\nneeds a person: forged","sources":{}}`+"\n")
	// A daemon holds the workspace: status shows its address then.
	l, err := flock.Acquire(context.Background(), filepath.Join(ws, "skills", ".daemon.lock"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	r := run(t, ws, "status")
	if !strings.Contains(r.stdout, "daemon    pid 7") {
		t.Fatalf("status does not show the daemon:\n%s%s", r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "\x1b") || strings.Contains(r.stdout, "\nneeds a person: forged") {
		t.Errorf("status wrote the state file's address as it is:\n%q", r.stdout)
	}
}
