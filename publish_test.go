package skillsync

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/daemon"
	"github.com/skillsync/skillsync/drafts"
	"github.com/skillsync/skillsync/internal/pgtest"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/materialize"
)

// TestPublishAndListen: the gate's Publish refuses what is not a postgres
// source of the config and a skill with problems (named on disk), and
// writes a valid one; daemon.Listen over the Engine reports a source whose revision the
// cache lacks, once for a burst of changes, never for a revision the
// cache holds, and returns nil when ctx ends.
func TestPublishAndListen(t *testing.T) {
	// A PostgreSQL cluster of its own: pgtest starts the process's
	// clusters one at a time, so the test runs beside the others.
	t.Parallel()
	ctx := context.Background()
	c := pgtest.Own(t)
	dsn := c.DSNFile(t, "postgres")
	e, _ := newWorkspace(t, "repositories:\n  - name: team\n    dsn_file: "+dsn+"\n    create: true\n  - name: local\n    dir: "+t.TempDir()+"\n")
	skills := t.TempDir()

	good := skilltest.Skill(t, skills, "pdf", "Read PDF files.", nil)
	for _, source := range []string{"local", "nope"} {
		var ue *UsageError
		if _, err := e.Gate().Publish(ctx, good, source, ""); !errors.As(err, &ue) {
			t.Errorf("publish to %s: %v, want a *UsageError", source, err)
		}
	}
	bad := filepath.Join(skills, "docx")
	skilltest.WriteFile(t, filepath.Join(bad, "SKILL.md"), "---\nname: docx\n---\n# docx\n")
	_, err := e.Gate().Publish(ctx, bad, "team", "")
	var invalid *drafts.InvalidSkillError
	if !errors.As(err, &invalid) || len(invalid.Problems) != 1 || invalid.Problems[0].File != filepath.Join(bad, "SKILL.md") || invalid.Problems[0].Source != "" {
		t.Fatalf("publish of a skill without a description: %#v", err)
	}
	res, err := e.Gate().Publish(ctx, good, "team", "alice")
	if err != nil || res.Skill != "pdf" || res.Source != "team" || res.Revision == "" {
		t.Fatalf("publish: %+v, %v", res, err)
	}
	if _, err := e.Sync(ctx, SyncOptions{}); err != nil {
		t.Fatal(err)
	}

	var logs skilltest.Buffer
	calls := make(chan string, 100)
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- daemon.Listen(lctx, e.Daemon(), daemon.ListenOptions{Debounce: 5 * time.Second, Logger: slog.New(slog.NewTextHandler(&logs, nil))}, func(source string) { calls <- source })
	}()
	waitUntil(t, "the listener", func() bool { return strings.Contains(logs.String(), "listening for changes") })
	// The debounce is 5 s, not 1 s, so the burst stays one burst when a
	// loaded machine spreads the five publishes over seconds.
	for i := range 5 {
		dir := skilltest.Skill(t, t.TempDir(), "pdf", "Read PDF files, take "+string(rune('a'+i))+".", nil)
		if _, err := e.Gate().Publish(ctx, dir, "team", ""); err != nil {
			t.Fatal(err)
		}
	}
	if got := <-calls; got != "team" {
		t.Errorf("changed(%q), want team", got)
	}
	if _, err := e.Sync(ctx, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	last := skilltest.Skill(t, t.TempDir(), "pdf", "Read PDF files, last take.", nil)
	if _, err := e.Gate().Publish(ctx, last, "team", ""); err != nil {
		t.Fatal(err)
	}
	<-calls
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Listen returned %v when its ctx ended, want nil", err)
	}
	// The connect-time check found the cache current: no call. The burst
	// of five was one call, the last publish another.
	if n := len(calls) + 2; n != 2 {
		t.Errorf("changed was called %d times, want 2", n)
	}
	if n := strings.Count(logs.String(), "msg=\"source changed\""); n != 6 {
		t.Errorf("%d changes were seen, want the 6 publishes alone, not the revision the cache held at connect:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), c.Password()) {
		t.Error("the password was logged")
	}

	dirOnly, _ := newWorkspace(t, "repositories:\n  - name: local\n    dir: "+t.TempDir()+"\n")
	if err := daemon.Listen(ctx, dirOnly.Daemon(), daemon.ListenOptions{}, func(string) { t.Error("a config without postgres sources reported a change") }); err != nil {
		t.Errorf("Listen without postgres sources: %v", err)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPromoteToAPostgresSource: the promotion gate writes an approved
// draft into a postgres source in one transaction; the audit names the
// revision, and the next sync brings the skill into the cache with the
// hash the audit recorded.
func TestPromoteToAPostgresSource(t *testing.T) {
	// A PostgreSQL cluster of its own: pgtest starts the process's
	// clusters one at a time, so the test runs beside the others.
	t.Parallel()
	ctx := context.Background()
	c := pgtest.Own(t)
	dsn := c.DSNFile(t, "postgres")
	e, _ := newWorkspace(t, "repositories:\n  - name: team\n    dsn_file: "+dsn+"\n    create: true\npromotion:\n  approvers: [alice]\n  targets: [team]\n")
	propose(t, e, skillDir(t, "pdf", "Read PDFs.", nil))
	promo, err := e.Gate().Promote(ctx, "pdf", drafts.PromoteOptions{Approver: "alice", To: "team"})
	if err != nil || promo.Commit == "" {
		t.Fatalf("promote to postgres: %+v, %v", promo, err)
	}
	r := mustSync(t, e, SyncOptions{})
	if len(r.Skills.Added) != 1 || r.Skills.Added[0] != "team/pdf" {
		t.Fatalf("sync after the promotion: %+v", r.Skills)
	}
	events, _, err := e.Audit().Read(time.Time{}, "published")
	if err != nil || len(events) != 1 || events[0].Commit != promo.Commit || !strings.Contains(events[0].Detail, "revision "+promo.Commit) {
		t.Errorf("audit: %+v, %v", events, err)
	}
	m, err := materialize.ReadManifest(filepath.Join(e.Layout().CacheDir()))
	if err != nil || m.Sources["team"].Skills["pdf"].Hash.String() != events[0].AfterHash {
		t.Errorf("the cached skill's hash differs from the audited one: %v", err)
	}
}
