package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/fleet"
	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/internal/pgtest"
	"github.com/skillsync/skillsync/internal/testmain"
	"github.com/skillsync/skillsync/layering"
)

var pgCluster pgtest.Shared

func TestMain(m *testing.M) {
	testmain.Setup()
	code := m.Run()
	pgCluster.Close()
	os.Exit(code)
}

// warnings collects what a store skipped.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) add(s string) { w.mu.Lock(); w.msgs = append(w.msgs, s); w.mu.Unlock() }
func (w *warnings) all() string  { w.mu.Lock(); defer w.mu.Unlock(); return strings.Join(w.msgs, "\n") }

// open opens a store on a fresh schema of c, named for the test.
func open(t *testing.T, c *pgtest.Cluster, w *warnings) (*fleet.Store, string) {
	t.Helper()
	schema := pgtest.Name(t)
	pgtest.Exec(t, c, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
	cfg := fleet.Config{DSNFile: c.DSNFile(t, "postgres"), Schema: schema, Create: true, Timeout: 5 * time.Second}
	if w != nil {
		cfg.Warn = w.add
	}
	s, err := fleet.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, schema
}

func mcopy(t *testing.T, source, name string) curator.Copy {
	t.Helper()
	c, err := curator.NewCopy(layering.Marketplace, source, name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func hb(host string) fleet.Heartbeat {
	return fleet.Heartbeat{Host: host, Environment: "prod", Version: "v1.2.3", Skills: 3,
		Sources: []fleet.SourceState{{Source: "team", Revision: "aaa", Status: "updated"}}}
}

func usageOf(t *testing.T, s *fleet.Store, opts fleet.UsageOptions) map[string]fleet.SkillUsage {
	t.Helper()
	list, err := s.Usage(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]fleet.SkillUsage{}
	for _, u := range list {
		out[u.Copy.String()] = u
	}
	return out
}

func TestPushIsIdempotent(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	s, _ := open(t, c, nil)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	pdf := mcopy(t, "team", "pdf")
	rec := []fleet.Record{{Copy: pdf, Uses: 5, Views: 2, LastUsedAt: now, LastViewedAt: now, State: "active"}}
	res, err := s.Push(ctx, hb("a"), rec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Uses != 5 || res.Views != 2 || res.Records != 1 || res.Seq != 1 {
		t.Fatalf("first push: %+v", res)
	}
	// The same state again, as a retry after a lost answer would send it.
	for range 2 {
		res, err = s.Push(ctx, hb("a"), rec)
		if err != nil {
			t.Fatal(err)
		}
		if res.Uses != 0 || res.Views != 0 {
			t.Fatalf("a repeated push added %+v", res)
		}
	}
	// An older state (counters lower) arriving late counts nothing and
	// lowers nothing.
	if _, err := s.Push(ctx, hb("a"), []fleet.Record{{Copy: pdf, Uses: 3, Views: 1, LastUsedAt: now.Add(-time.Hour), State: "active"}}); err != nil {
		t.Fatal(err)
	}
	rec[0].Uses = 8
	if res, err = s.Push(ctx, hb("a"), rec); err != nil || res.Uses != 3 || res.Seq != 5 {
		t.Fatalf("growth: %+v %v", res, err)
	}
	// A second host.
	if _, err := s.Push(ctx, hb("b"), []fleet.Record{{Copy: pdf, Uses: 1, LastUsedAt: now, State: "active"}}); err != nil {
		t.Fatal(err)
	}
	u := usageOf(t, s, fleet.UsageOptions{Since: now.Add(-24 * time.Hour)})[pdf.String()]
	if u.Uses != 9 || u.Views != 2 || u.Hosts != 2 || u.LastUsedAt == nil || !u.LastUsedAt.Equal(now) || u.Source != "team" || u.Name != "pdf" {
		t.Fatalf("usage of pdf: %+v", u)
	}
}

// Concurrent retries of the same push, as a daemon and a user running
// fleet push at once, still count once.
func TestConcurrentPushesCountOnce(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	s, _ := open(t, c, nil)
	ctx := context.Background()
	now := time.Now().UTC()
	var recs []fleet.Record
	for i := range 50 {
		recs = append(recs, fleet.Record{Copy: mcopy(t, "team", fmt.Sprintf("s%d", i)), Uses: 2, Views: 1, LastUsedAt: now, LastViewedAt: now})
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Push(ctx, hb("same"), recs)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var total int64
	for _, u := range usageOf(t, s, fleet.UsageOptions{}) {
		total += u.Uses
	}
	if total != 100 {
		t.Fatalf("8 concurrent pushes of 50 records with 2 uses each counted %d uses, want 100", total)
	}
}

func TestUsageWindowAndOrder(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	s, _ := open(t, c, nil)
	ctx := context.Background()
	now := time.Now().UTC()
	old := now.Add(-40 * 24 * time.Hour)
	push := func(host string, recs ...fleet.Record) {
		t.Helper()
		if _, err := s.Push(ctx, hb(host), recs); err != nil {
			t.Fatal(err)
		}
	}
	push("a", fleet.Record{Copy: mcopy(t, "team", "busy"), Uses: 10, LastUsedAt: now},
		fleet.Record{Copy: mcopy(t, "team", "idle"), Uses: 4, LastUsedAt: old},
		fleet.Record{Copy: mcopy(t, "other", "busy"), Uses: 1, LastUsedAt: now},
		fleet.Record{Copy: curator.Copy{Layer: layering.Workspace, Name: "mine"}, Uses: 2, LastUsedAt: now})
	push("b", fleet.Record{Copy: mcopy(t, "team", "busy"), Uses: 3, LastUsedAt: now},
		fleet.Record{Copy: mcopy(t, "team", "never")})
	list, err := s.Usage(ctx, fleet.UsageOptions{Source: "team", Since: now.Add(-30 * 24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range list {
		got = append(got, fmt.Sprintf("%s:%d/%d", u.Name, u.Uses, u.Hosts))
	}
	// idle's 4 uses are 40 days old: outside the window.
	if want := "busy:13/2 idle:0/0 never:0/0"; strings.Join(got, " ") != want {
		t.Fatalf("fleet usage --source team = %q, want %q", strings.Join(got, " "), want)
	}
	if u := usageOf(t, s, fleet.UsageOptions{})["workspace/mine"]; u.Source != "workspace" || u.Uses != 2 {
		t.Fatalf("workspace copy: %+v", u)
	}
}

func TestStatus(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	s, schema := open(t, c, nil)
	ctx := context.Background()
	a := hb("a")
	if _, err := s.Push(ctx, a, nil); err != nil {
		t.Fatal(err)
	}
	b := hb("b")
	b.Sources = []fleet.SourceState{{Source: "team", Revision: "bbb", Status: "updated"}, {Source: "pg", Status: "failed", Error: "connect: refused"}}
	if _, err := s.Push(ctx, b, []fleet.Record{{Copy: mcopy(t, "team", "pdf"), Uses: 4, State: "active"}}); err != nil {
		t.Fatal(err)
	}
	// Host c went silent three hours ago.
	if _, err := s.Push(ctx, hb("c"), nil); err != nil {
		t.Fatal(err)
	}
	pgtest.Exec(t, c, "UPDATE "+schema+".hosts SET last_seen_at = now() - interval '3 hours' WHERE host = 'c'")
	hosts, err := s.Status(ctx, fleet.StatusOptions{StaleAfter: 2 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if len(hosts) != 3 {
		t.Fatalf("hosts: %+v", hosts)
	}
	ha, hbs, hc := hosts[0], hosts[1], hosts[2]
	if ha.Host != "a" || ha.Silent || ha.Failing || len(ha.Sources) != 1 || !ha.Sources[0].Behind || ha.Environment != "prod" || ha.Version != "v1.2.3" {
		t.Fatalf("host a (at aaa while b has bbb): %+v", ha)
	}
	if hbs.Silent || !hbs.Failing || len(hbs.Sources) != 2 || hbs.Sources[1].Behind || hbs.Sources[0].Error != "connect: refused" {
		t.Fatalf("host b: %+v", hbs)
	}
	if !hc.Silent || hc.Failing {
		t.Fatalf("host c: %+v", hc)
	}
	// A revision row dated in the future, written by hand, makes no host
	// behind that was not.
	pgtest.Exec(t, c, "INSERT INTO "+schema+".revisions (source, revision, first_seen_at) VALUES ('team', 'zzz', now() + interval '1 year')")
	if hosts, err := s.Status(ctx, fleet.StatusOptions{}); err != nil || hosts[1].Sources[1].Behind || !hosts[0].Sources[0].Behind {
		t.Fatalf("status with a revision row in the future: %+v %v", hosts, err)
	}
	// A host that drops a source no longer reports it.
	b.Sources = b.Sources[:1]
	if _, err := s.Push(ctx, b, nil); err != nil {
		t.Fatal(err)
	}
	hosts, err = s.Status(ctx, fleet.StatusOptions{Skill: "PDF"})
	if err != nil {
		t.Fatal(err)
	}
	if len(hosts) != 1 || hosts[0].Host != "b" || hosts[0].Uses != 4 || hosts[0].Failing || len(hosts[0].Sources) != 1 {
		t.Fatalf("status --skill PDF: %+v", hosts)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	w := &warnings{}
	s, schema := open(t, c, w)
	ctx := context.Background()
	now := time.Now().UTC()
	for _, host := range []string{"", "evil\x1b[31m", "new\nline", " padded", strings.Repeat("h", 201), "bidi\u202e"} {
		if _, err := s.Push(ctx, hb(host), nil); err == nil {
			t.Errorf("host id %q was accepted", host)
		}
	}
	bad := hb("ok")
	bad.Sources[0].Revision = "rev\x00"
	if _, err := s.Push(ctx, bad, nil); err == nil {
		t.Error("a revision with NUL was accepted")
	}
	res, err := s.Push(ctx, hb("ok"), []fleet.Record{
		{Copy: mcopy(t, "team", "good"), Uses: 1, LastUsedAt: now},
		{Copy: curator.Copy{Layer: layering.Marketplace, Owner: "team", Name: "../escape"}, Uses: 1},
		{Copy: mcopy(t, "team", "huge"), Uses: fleet.MaxCount + 1},
		{Copy: mcopy(t, "team", "negative"), Views: -1},
		{Copy: mcopy(t, "team", "future"), Uses: 1, LastUsedAt: now.Add(48 * time.Hour)},
		{Copy: mcopy(t, "team", "good"), Uses: 1, LastUsedAt: now},
	})
	if err != nil {
		t.Fatal(err)
	}
	// A use dated past the server's now counts, dated no later than it:
	// a clock ahead wrote it, and a later time hides nothing.
	if res.Records != 2 || len(res.Skipped) != 4 {
		t.Fatalf("push of hostile records: %+v", res)
	}
	if f := usageOf(t, s, fleet.UsageOptions{})["marketplace:team/future"]; f.Uses != 1 || f.LastUsedAt == nil || f.LastUsedAt.After(time.Now()) {
		t.Errorf("a use dated two days ahead: %+v, want it counted, dated by now", f)
	}
	// Rows written straight into the tables by someone holding the DSN.
	pgtest.Exec(t, c, "INSERT INTO "+schema+".hosts (host, version, pushed_by) VALUES ('bad\x07host', 'x', 4), ('farfuture', 'x', 4)")
	pgtest.Exec(t, c, "UPDATE "+schema+".hosts SET last_seen_at = now() + interval '3 days' WHERE host = 'farfuture'")
	pgtest.Exec(t, c, "INSERT INTO "+schema+".host_copies (host, layer, owner, name, uses) VALUES ('ok', 'marketplace', 'team', '../../etc', 5), ('ok', 'bogus', '', 'x', 1), ('ok', 'marketplace', 'team', 'many', 1)")
	pgtest.Exec(t, c, "INSERT INTO "+schema+".copy_days (layer, owner, name, day, uses) VALUES ('marketplace', 'team', 'many', current_date - 1, 9000000000000000000), ('marketplace', 'team', 'many', current_date - 2, 9000000000000000000)")
	hosts, err := s.Status(ctx, fleet.StatusOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hosts) != 1 || hosts[0].Host != "ok" {
		t.Fatalf("status with hostile host rows: %+v", hosts)
	}
	u := usageOf(t, s, fleet.UsageOptions{})
	if len(u) != 3 || u["marketplace:team/good"].Uses != 1 || u["marketplace:team/many"].Uses != fleet.MaxCount || u["marketplace:team/future"].Uses != 1 {
		t.Fatalf("usage with hostile rows: %+v", u)
	}
	// Two rows whose sum no bigint holds: the host is skipped, the rest
	// answered.
	pgtest.Exec(t, c, "INSERT INTO "+schema+".host_copies (host, layer, owner, name, uses) VALUES ('ok', 'workspace', '', 'good', 9000000000000000000), ('ok', 'user', 'ann', 'good', 9000000000000000000)")
	if _, err := s.Status(ctx, fleet.StatusOptions{Skill: "good"}); err != nil {
		t.Errorf("status of a skill with counters past a bigint's sum: %v", err)
	}
	for _, want := range []string{`bad\ahost`, "farfuture", "../../etc", "bogus", "many"} {
		if !strings.Contains(w.all(), want) {
			t.Errorf("no warning names %q:\n%s", want, w.all())
		}
	}
}

// TestUsageSumPastMaxCount: each host may push counters up to MaxCount,
// and their sum may pass it; fleet usage shows it as MaxCount, the most
// used, not as no use at all, which made one host pushing the most it
// may turn a skill idle in the fleet's eyes.
func TestUsageSumPastMaxCount(t *testing.T) {
	t.Parallel()
	w := &warnings{}
	s, _ := open(t, pgCluster.Get(t), w)
	ctx := context.Background()
	now := time.Now().UTC().Add(-time.Minute)
	pdf, docx := mcopy(t, "team", "pdf"), mcopy(t, "team", "docx")
	for _, host := range []string{"a", "b"} {
		if _, err := s.Push(ctx, hb(host), []fleet.Record{{Copy: pdf, Uses: fleet.MaxCount, LastUsedAt: now, State: "active"}, {Copy: docx, Uses: 1, LastUsedAt: now, State: "active"}}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.Usage(ctx, fleet.UsageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Copy != pdf || list[0].Uses != fleet.MaxCount || list[0].Hosts != 2 || list[1].Uses != 2 {
		t.Errorf("usage: %+v, want pdf first at %d uses on 2 hosts", list, int64(fleet.MaxCount))
	}
	if !strings.Contains(w.all(), "add up to more than") {
		t.Errorf("no warning says the sum passed the bound:\n%s", w.all())
	}
}

func TestSchemaAndSecrets(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	ctx := context.Background()
	schema := pgtest.Name(t)
	pgtest.Exec(t, c, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
	dsnFile := c.DSNFile(t, "postgres")
	s, err := fleet.Open(ctx, fleet.Config{DSNFile: dsnFile, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Status(ctx, fleet.StatusOptions{}); !errors.Is(err, fleet.ErrSchemaVersion) || !strings.Contains(err.Error(), "create: true") {
		t.Fatalf("missing tables without create: %v", err)
	}
	// A wrong password: the error names the file, never the secret.
	wrong := strings.Replace(c.DSN("postgres"), c.Password(), "sekrit-"+c.Password()[3:], 1)
	s2, err := fleet.Open(ctx, fleet.Config{DSNEnv: "FLEET_TEST_DSN", Schema: schema, Create: true,
		Env: hostenv.New("", []string{"FLEET_TEST_DSN=" + wrong})})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	_, err = s2.Push(ctx, hb("a"), nil)
	if err == nil {
		t.Fatal("a wrong password connected")
	}
	if strings.Contains(err.Error(), c.Password()[3:]) || strings.Contains(err.Error(), wrong) || !strings.Contains(err.Error(), "$FLEET_TEST_DSN") {
		t.Fatalf("error leaks or does not say where: %v", err)
	}
	bad := hostenv.New("", []string{"FLEET_TEST_DSN=postgres://u:p@[bad"})
	if _, err := fleet.Open(ctx, fleet.Config{DSNEnv: "FLEET_TEST_DSN", Schema: schema, Env: bad}); !errors.Is(err, fleet.ErrDSN) || strings.Contains(err.Error(), "[bad") {
		t.Fatalf("unparsable DSN: %v", err)
	}
	// A schema newer than this skillsync is refused, even with create.
	s3, schema3 := open(t, c, nil)
	if _, err := s3.Push(ctx, hb("a"), nil); err != nil {
		t.Fatal(err)
	}
	pgtest.Exec(t, c, "INSERT INTO "+schema3+".schema_migrations (version) VALUES (999)")
	s4, err := fleet.Open(ctx, fleet.Config{DSNFile: dsnFile, Schema: schema3, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s4.Close()
	if _, err := s4.Push(ctx, hb("a"), nil); !errors.Is(err, fleet.ErrSchemaVersion) || !strings.Contains(err.Error(), "upgrade skillsync") {
		t.Fatalf("a newer schema: %v", err)
	}
}

// The database stopped in the middle of a run: the push fails as
// unreachable, and the next push after it is back sends everything.
func TestDatabaseStopsAndStarts(t *testing.T) {
	// A PostgreSQL cluster of its own: pgtest starts the process's
	// clusters one at a time, so the test runs beside the others.
	t.Parallel()
	c := pgtest.Own(t)
	s, _ := open(t, c, nil)
	ctx := context.Background()
	now := time.Now().UTC()
	pdf := mcopy(t, "team", "pdf")
	if _, err := s.Push(ctx, hb("a"), []fleet.Record{{Copy: pdf, Uses: 1, LastUsedAt: now}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_, err := s.Push(tctx, hb("a"), []fleet.Record{{Copy: pdf, Uses: 3, LastUsedAt: now}})
	cancel()
	if err == nil || !fleet.IsUnreachable(err) {
		t.Fatalf("push to a stopped database: %v", err)
	}
	if err := c.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	// The port may have changed: open again as a new process would.
	s2, err := fleet.Open(ctx, fleet.Config{DSNFile: c.DSNFile(t, "postgres"), Schema: pgtest.Name(t), Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := s2.Push(ctx, hb("a"), []fleet.Record{{Copy: pdf, Uses: 3, LastUsedAt: now}}); err != nil {
		t.Fatal(err)
	}
	if u := usageOf(t, s2, fleet.UsageOptions{})[pdf.String()]; u.Uses != 3 {
		t.Fatalf("after the restart: %+v", u)
	}
}

// TestCaseOnlyCopiesAreOneSkill: a source's curation takes copies whose
// names differ only in case for one skill (a rename from PDF to pdf
// leaves both in the store): an idle PDF does not retire a pdf used
// today.
func TestCaseOnlyCopiesAreOneSkill(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	s, schema := open(t, c, nil)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	if _, err := s.Push(ctx, hb("a"), []fleet.Record{{Copy: mcopy(t, "team", "pdf"), Uses: 1, LastUsedAt: now, State: "active"}}); err != nil {
		t.Fatal(err)
	}
	pgtest.Exec(t, c, "INSERT INTO "+schema+".host_copies (host, layer, owner, name, uses, first_seen_at) VALUES ('a', 'marketplace', 'team', 'PDF', 0, '2020-01-01')")
	out, err := fleet.CurateSource(ctx, s, fleet.SourceCurationRequest{Source: "team", Skills: []string{"pdf"}, Now: now,
		StaleAfter: 30 * 24 * time.Hour, ArchiveAfter: 90 * 24 * time.Hour, MinHosts: 1, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Retired) != 0 || out.Kept != 1 {
		t.Errorf("a skill used today: retired %+v, kept %d", out.Retired, out.Kept)
	}
}

// TestSourceCurationJudgesByTheStoresClock: without --now, a source's
// curation judges idle time by the store server's clock, the one hosts'
// times are checked against: a curating machine whose clock ran 60 days
// ahead took a skill used a day ago for idle past archive_after.
func TestSourceCurationJudgesByTheStoresClock(t *testing.T) {
	t.Parallel()
	s, _ := open(t, pgCluster.Get(t), nil)
	ctx := context.Background()
	yesterday := time.Now().UTC().Add(-24 * time.Hour).Truncate(time.Second)
	if _, err := s.Push(ctx, hb("a"), []fleet.Record{{Copy: mcopy(t, "team", "pdf"), Uses: 1, LastUsedAt: yesterday, State: "active"}}); err != nil {
		t.Fatal(err)
	}
	ahead := time.Now().Add(60 * 24 * time.Hour)
	out, err := fleet.CurateSource(ctx, s, fleet.SourceCurationRequest{Source: "team", Skills: []string{"pdf"}, Clock: ahead,
		StaleAfter: 100 * 24 * time.Hour, ArchiveAfter: 30 * 24 * time.Hour, MinHosts: 1, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Retired) != 0 || out.Kept != 1 {
		t.Errorf("a skill used a day ago, curated on a clock 60 days ahead: retired %+v, kept %d", out.Retired, out.Kept)
	}
}

// TestAFutureRowHidesOnlyItsTime: a host's row whose last use is days
// ahead (written into the store by hand) leaves that time out, not the
// copy: the other hosts' uses and latest use still count.
func TestAFutureRowHidesOnlyItsTime(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	w := &warnings{}
	s, schema := open(t, c, w)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	pdf := mcopy(t, "team", "pdf")
	if _, err := s.Push(ctx, hb("a"), []fleet.Record{{Copy: pdf, Uses: 2, LastUsedAt: now, State: "active"}}); err != nil {
		t.Fatal(err)
	}
	pgtest.Exec(t, c, "INSERT INTO "+schema+".hosts (host, version, pushed_by) VALUES ('evil', 'x', 4)")
	pgtest.Exec(t, c, "INSERT INTO "+schema+".host_copies (host, layer, owner, name, uses, last_used_at) VALUES ('evil', 'marketplace', 'team', 'pdf', 0, now() + interval '2 days')")
	got, ok := usageOf(t, s, fleet.UsageOptions{Since: now.Add(-time.Hour)})[pdf.String()]
	if !ok || got.Uses != 2 || got.LastUsedAt == nil || !got.LastUsedAt.Equal(now) {
		t.Fatalf("pdf with a row from the future: %+v (listed %v), want 2 uses, last used %v", got, ok, now)
	}
	if !strings.Contains(w.all(), "ahead") {
		t.Errorf("no warning says a time was left out:\n%s", w.all())
	}
}

// TestForeignTables: a schema that holds tables of the fleet's names that
// skillsync did not make is refused with the fix: a schema of its own.
func TestForeignTables(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	schema := pgtest.Name(t)
	pgtest.Exec(t, c, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
	pgtest.Exec(t, c, "CREATE SCHEMA "+schema)
	pgtest.Exec(t, c, "CREATE TABLE "+schema+".hosts (id serial PRIMARY KEY, fqdn text)")
	cfg := fleet.Config{DSNFile: c.DSNFile(t, "postgres"), Schema: schema, Create: true, Timeout: 5 * time.Second}
	s, err := fleet.Open(context.Background(), cfg)
	if err == nil {
		defer s.Close()
		_, err = s.Push(context.Background(), hb("a"), nil)
	}
	if err == nil || !strings.Contains(err.Error(), "set schema: in fleet: to a schema of skillsync's own") {
		t.Errorf("a schema with a foreign hosts table: %v", err)
	}
}

// TestReaderClockBehindKeepsRecentUses: fleet usage read on a machine
// whose clock runs two days behind the server (the curation job's
// runner, say) still sees a host's use of a moment ago; judged against
// the reader's clock it looked days ahead and was left out, so the
// skill's last use went back to an older host's, and curation on fleet
// data would take a skill in use for idle.
func TestReaderClockBehindKeepsRecentUses(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	s, schema := open(t, c, nil)
	dsn := c.DSNFile(t, "postgres")
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	old := now.Add(-40 * 24 * time.Hour)
	pdf := mcopy(t, "team", "pdf")
	if _, err := s.Push(ctx, hb("host-old"), []fleet.Record{{Copy: pdf, Uses: 1, LastUsedAt: old, State: "active"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Push(ctx, hb("host-new"), []fleet.Record{{Copy: pdf, Uses: 1, LastUsedAt: now, State: "active"}}); err != nil {
		t.Fatal(err)
	}
	// Read by a machine whose clock runs two days behind.
	behind, err := fleet.Open(ctx, fleet.Config{DSNFile: dsn, Schema: schema, Timeout: 5 * time.Second,
		Now: func() time.Time { return time.Now().Add(-48 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	defer behind.Close()
	s = behind
	got := usageOf(t, s, fleet.UsageOptions{Since: old.Add(-time.Hour)})[pdf.String()]
	if got.LastUsedAt == nil || !got.LastUsedAt.Equal(now) {
		t.Errorf("pdf's last use in the fleet read on a clock 2 days behind: %v, want %v", got.LastUsedAt, now)
	}
	last, _, err := fleet.LastUses(ctx, s, old.Add(-time.Hour), 24*time.Hour, 1)
	if err != nil || !last[pdf].Equal(now) {
		t.Errorf("LastUses: %v %v, want pdf at %v", last, err, now)
	}
}

// TestRollupTriggerDroppedByHand: a schema at this version whose rollup
// trigger was dropped or disabled by hand took every push and added it to
// no rollup: fleet usage lost the fleet's uses, silently. The store now
// refuses it, naming the trigger and the fix.
func TestRollupTriggerDroppedByHand(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	ctx := context.Background()
	pdf := mcopy(t, "team", "pdf")
	for _, alter := range []string{"DROP TRIGGER rollup_insert ON %s.host_copies", "ALTER TABLE %s.host_copies DISABLE TRIGGER rollup_update"} {
		s, schema := open(t, c, nil)
		if _, err := s.Push(ctx, hb("a"), nil); err != nil {
			t.Fatal(err)
		}
		pgtest.Exec(t, c, fmt.Sprintf(alter, schema))
		s2, err := fleet.Open(ctx, fleet.Config{DSNFile: c.DSNFile(t, "postgres"), Schema: schema, Create: true, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		for i := range 2 {
			_, err = s2.Push(ctx, hb("a"), []fleet.Record{{Copy: pdf, Uses: int64(2 + i), LastUsedAt: time.Now().Add(-time.Minute), State: "active"}})
		}
		if !errors.Is(err, fleet.ErrSchemaVersion) || !strings.Contains(err.Error(), "host_copies is missing or disabled") || !strings.Contains(err.Error(), "ENABLE TRIGGER") {
			t.Errorf("%s: push: %v; want a refusal naming the trigger and the fix", alter, err)
		}
	}
}

// TestStoreErrorsSayWhatToDo: a primary key or function dropped by hand,
// a role without write privileges and a role's statement_timeout each
// failed a push with the server's bare message; each now says what to
// do, beside where the store is.
func TestStoreErrorsSayWhatToDo(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	ctx := context.Background()
	pdf := mcopy(t, "team", "pdf")
	for i, tc := range []struct{ setup, want string }{
		{"ALTER TABLE %[1]s.host_copies DROP CONSTRAINT host_copies_pkey CASCADE", "changed by hand"},
		{"DROP FUNCTION %[1]s.sat(numeric) CASCADE", "changed by hand"},
		{"GRANT USAGE ON SCHEMA %[1]s TO %[2]s; GRANT SELECT ON ALL TABLES IN SCHEMA %[1]s TO %[2]s", "lacks a privilege on schema"},
		// The push waits for a lock a test transaction holds, past the
		// role's statement_timeout.
		{"ALTER ROLE %[2]s SET statement_timeout = '300ms'; GRANT ALL ON SCHEMA %[1]s TO %[2]s; GRANT ALL ON ALL TABLES IN SCHEMA %[1]s TO %[2]s", "statement_timeout"},
	} {
		s, schema := open(t, c, nil)
		if _, err := s.Push(ctx, hb("a"), nil); err != nil {
			t.Fatal(err)
		}
		dsn := c.DSNFile(t, "postgres")
		if strings.Contains(tc.setup, "%[2]s") {
			// A role of the test's own, removed with what it was granted.
			role := fmt.Sprintf("%s_role%d", schema, i)
			pgtest.Exec(t, c, "CREATE ROLE "+role+" LOGIN PASSWORD 'pw'")
			defer pgtest.Exec(t, c, "DROP OWNED BY "+role+"; DROP ROLE "+role)
			dsn = filepath.Join(t.TempDir(), "dsn")
			if err := os.WriteFile(dsn, []byte(fmt.Sprintf("postgres://%s:pw@127.0.0.1:%d/postgres?sslmode=disable", role, c.Port())), 0o600); err != nil {
				t.Fatal(err)
			}
			pgtest.Exec(t, c, fmt.Sprintf(tc.setup, schema, role))
		} else {
			pgtest.Exec(t, c, fmt.Sprintf(tc.setup, schema))
		}
		if tc.want == "statement_timeout" {
			tx := pgtest.Begin(t, c)
			if _, err := tx.Exec(ctx, "LOCK TABLE "+schema+".hosts"); err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
		}
		s2, err := fleet.Open(ctx, fleet.Config{DSNFile: dsn, Schema: schema, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		_, err = s2.Push(ctx, hb("a"), []fleet.Record{{Copy: pdf, Uses: 2, LastUsedAt: time.Now().Add(-time.Minute), State: "active"}})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "schema "+schema) {
			t.Errorf("%s: push: %v; want the store and %q", tc.setup, err, tc.want)
		}
	}
}
