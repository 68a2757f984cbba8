package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/fleet"
	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/pgtest"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// fleetHost is a workspace that reports to the fleet store as host.
type fleetHost struct {
	dir, host string
}

// newFleetHosts makes hosts workspaces sharing one dir source of skills
// (pdf, docs) and one fleet schema on c, the DSN in a file.
func newFleetHosts(t *testing.T, c *pgtest.Cluster, hosts ...string) (skills string, out []fleetHost, schema, dsnFile string) {
	t.Helper()
	return newFleetHostsWith(t, c, "", hosts...)
}

// newFleetHostsWith is newFleetHosts with extra appended to each config.
func newFleetHostsWith(t *testing.T, c *pgtest.Cluster, extra string, hosts ...string) (skills string, out []fleetHost, schema, dsnFile string) {
	t.Helper()
	skills = t.TempDir()
	for _, name := range []string{"pdf", "docs"} {
		skilltest.WriteFile(t, filepath.Join(skills, name, "SKILL.md"), "---\nname: "+name+"\ndescription: The "+name+" skill.\n---\n# "+name+"\n")
	}
	schema = pgtest.Name(t)
	pgtest.Exec(t, c, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
	dsnFile = c.DSNFile(t, "postgres")
	for _, h := range hosts {
		ws := t.TempDir()
		skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), fmt.Sprintf(`repositories:
  - name: team
    dir: %s
fleet:
  dsn_file: %s
  schema: %s
  create: true
  host: %s
  environment: prod
  timeout: 5s
schedule:
  sync: "@every 1h"
  fleet_push: "@every 1h"
`, skills, dsnFile, schema, h)+extra)
		if r := run(t, ws, "sync"); r.code != 0 {
			t.Fatalf("sync %s: %d %s", h, r.code, r.stderr)
		}
		out = append(out, fleetHost{dir: ws, host: h})
	}
	return skills, out, schema, dsnFile
}

type fleetUsageRow struct {
	Name, Source string
	Uses, Views  int64
	Hosts        int
	LastUsedAt   *time.Time `json:"last_used_at"`
}

func fleetUsage(t *testing.T, ws string, args ...string) map[string]fleetUsageRow {
	t.Helper()
	r := run(t, ws, append([]string{"fleet", "usage", "--json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("fleet usage: %d %s", r.code, r.stderr)
	}
	out := map[string]fleetUsageRow{}
	for _, u := range decode[[]fleetUsageRow](t, r) {
		out[u.Source+"/"+u.Name] = u
	}
	return out
}

// checkNoSecret fails when a command's output holds the cluster's password.
func checkNoSecret(t *testing.T, c *pgtest.Cluster, r result) {
	t.Helper()
	if strings.Contains(r.stdout+r.stderr, c.Password()) {
		t.Fatalf("the DSN's password is in the output:\n%s%s", r.stdout, r.stderr)
	}
}

func TestFleetTwoHosts(t *testing.T) {
	// A PostgreSQL cluster of its own: pgtest starts the process's
	// clusters one at a time, so the test runs beside the others.
	t.Parallel()
	c := pgtest.Own(t)
	_, hosts, schema, dsnFile := newFleetHosts(t, c, "alpha", "beta")
	alpha, beta := hosts[0].dir, hosts[1].dir
	use := func(ws, name string, n int) {
		t.Helper()
		for range n {
			if r := run(t, ws, "use", name); r.code != 0 {
				t.Fatalf("use %s: %d %s", name, r.code, r.stderr)
			}
		}
	}
	use(alpha, "pdf", 2)
	use(beta, "pdf", 1)
	for _, h := range hosts {
		r := run(t, h.dir, "fleet", "push")
		checkNoSecret(t, c, r)
		if r.code != 0 || !strings.Contains(r.stdout, "pushed host "+h.host) {
			t.Fatalf("fleet push %s: %d %s%s", h.host, r.code, r.stdout, r.stderr)
		}
	}
	// Nothing changed: the next push sends no record and counts nothing.
	r := run(t, alpha, "fleet", "push", "--json")
	if got := decode[fleet.PushResult](t, r); got.Uses != 0 || got.Records != 0 {
		t.Fatalf("a push with nothing new: %s", r.stdout)
	}
	// Forget what was acknowledged, as after a lost answer: everything is
	// sent again and still counts once.
	if err := os.Remove(filepath.Join(alpha, "skills", ".fleet-pushed.json")); err != nil {
		t.Fatal(err)
	}
	r = run(t, alpha, "fleet", "push", "--json")
	if got := decode[fleet.PushResult](t, r); got.Uses != 0 || got.Records == 0 {
		t.Fatalf("a resent push: %s", r.stdout)
	}
	u := fleetUsage(t, alpha, "--source", "team", "--since", "30d")
	if u["team/pdf"].Uses != 3 || u["team/pdf"].Hosts != 2 || u["team/pdf"].LastUsedAt == nil || u["team/docs"].Uses != 0 || u["team/docs"].Hosts != 0 {
		t.Fatalf("fleet usage: %+v", u)
	}
	r = run(t, beta, "fleet", "usage")
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[1], "pdf") || !strings.HasPrefix(lines[2], "docs") {
		t.Fatalf("fleet usage, idle last:\n%s", r.stdout)
	}

	r = run(t, alpha, "fleet", "status", "--json")
	if r.code != 0 {
		t.Fatalf("fleet status: %d %s%s", r.code, r.stdout, r.stderr)
	}
	st := decode[[]fleet.HostStatus](t, r)
	if len(st) != 2 || st[0].Host != "alpha" || st[1].Host != "beta" || st[0].Environment != "prod" || len(st[0].Sources) != 1 ||
		st[0].Sources[0].Source != "team" || st[0].Sources[0].Revision == "" || st[0].Sources[0].Behind || st[0].Skills != 2 {
		t.Fatalf("fleet status: %s", r.stdout)
	}
	// Each push measured the host's clock against the store's: in step.
	if st[0].ClockSkewMS == nil || st[1].ClockSkewMS == nil {
		t.Fatalf("fleet status --json without the hosts' clock skew: %s", r.stdout)
	}
	r = run(t, alpha, "fleet", "status")
	// alpha: HOST ENVIRONMENT VERSION LAST-SEEN CLOCK STATE SOURCES
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 3 || strings.Fields(lines[0])[5] != "CLOCK" ||
		len(strings.Fields(lines[1])) < 5 || strings.Fields(lines[1])[4] != "ok" {
		t.Fatalf("fleet status, the clock column:\n%s", r.stdout)
	}
	r = run(t, alpha, "fleet", "status", "--skill", "pdf", "--json")
	if st := decode[[]fleet.HostStatus](t, r); len(st) != 2 || st[0].Uses != 2 || st[1].Uses != 1 {
		t.Fatalf("fleet status --skill pdf: %s", r.stdout)
	}

	// The database goes away: a sync still works, the usage stays local,
	// the push fails without the secret, and the next push carries it.
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if r := run(t, alpha, "sync"); r.code != 0 {
		t.Fatalf("sync with the fleet store down: %d %s", r.code, r.stderr)
	}
	use(alpha, "pdf", 1)
	r = run(t, alpha, "fleet", "push")
	checkNoSecret(t, c, r)
	if r.code != 1 || !strings.Contains(r.stderr, dsnFile) {
		t.Fatalf("push with the store down: %d %s%s", r.code, r.stdout, r.stderr)
	}
	if err := c.Resume(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dsnFile, []byte(c.DSN("postgres")), 0o600); err != nil { // the port may have moved
		t.Fatal(err)
	}
	if r := run(t, alpha, "fleet", "push"); r.code != 0 {
		t.Fatalf("push after the restart: %d %s", r.code, r.stderr)
	}
	if u := fleetUsage(t, beta); u["team/pdf"].Uses != 4 {
		t.Fatalf("after the restart: %+v", u)
	}

	// Beta goes silent: status exits 1 for an alert.
	pgtest.Exec(t, c, "UPDATE "+schema+".hosts SET last_seen_at = now() - interval '3 hours' WHERE host = 'beta'")
	r = run(t, alpha, "fleet", "status", "--stale-after", "2h")
	if r.code != 1 || !strings.Contains(r.stdout, "silent") || !strings.Contains(r.stderr, "1 host silent") {
		t.Fatalf("status with a silent host: %d %s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, alpha, "fleet", "status", "--stale-after", "4h"); r.code != 0 {
		t.Fatalf("status within the window: %d %s%s", r.code, r.stdout, r.stderr)
	}
}

func TestFleetUsageErrors(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "fleet:\n  postgres: SKILLSYNC_TEST_FLEET_DSN\n")
	for _, args := range [][]string{
		{"fleet", "usage", "--since", "yesterday"},
		{"fleet", "status", "--stale-after", "-1h"},
		{"fleet", "usage", "--source", "nope"},
	} {
		if r := run(t, ws, args...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, r.code, r.stderr)
		}
	}
	// No fleet: section.
	plain := t.TempDir()
	if r := run(t, plain, "fleet", "push"); r.code != 2 || !strings.Contains(r.stderr, "fleet:") {
		t.Errorf("push without fleet: %d %s", r.code, r.stderr)
	}
	// An unset variable: named, exit 1.
	r := run(t, ws, "fleet", "push")
	if r.code != 1 || !strings.Contains(r.stderr, "SKILLSYNC_TEST_FLEET_DSN") {
		t.Errorf("push with the variable unset: %d %s", r.code, r.stderr)
	}
	// A DSN with a password that does not parse is never echoed.
	r = runEnv(t, ws, []string{"SKILLSYNC_TEST_FLEET_DSN=postgres://u:hunter2@[::1"}, "fleet", "status")
	if r.code != 1 || strings.Contains(r.stderr, "hunter2") {
		t.Errorf("a DSN that does not parse: %d %s", r.code, r.stderr)
	}
}

// The daemon pushes after its first sync.
func TestFleetDaemonPushes(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	_, hosts, _, _ := newFleetHosts(t, c, "daemon-host")
	ws := hosts[0].dir
	if r := run(t, ws, "use", "docs"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	d := startDaemon(t, ws)
	// The push after the first sync is silent when it works: the fleet
	// store is where it shows.
	waitFor(t, d, "a fleet push", func() bool { return fleetUsage(t, ws)["team/docs"].Uses == 1 })
	if u := fleetUsage(t, ws); u["team/docs"].Uses != 1 || u["team/docs"].Hosts != 1 {
		t.Fatalf("usage the daemon pushed: %+v\n%s", u, d.dump())
	}
	if strings.Contains(d.dump(), c.Password()) {
		t.Fatal("the daemon's log shows the DSN's password")
	}
}

// Curation with fleet: judges a marketplace copy by its last use on any
// host, and waits while too few hosts report.
func TestFleetCuration(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	_, hosts, schema, _ := newFleetHostsWith(t, c, "curator:\n  stale_after: 1h\n  archive_after: 2h\n  min_idle: 0s\n", "alpha", "beta")
	alpha, beta := hosts[0].dir, hosts[1].dir
	for _, h := range []struct{ dir, skill string }{{alpha, "pdf"}, {beta, "docs"}} {
		if r := run(t, h.dir, "use", h.skill); r.code != 0 {
			t.Fatal(r.stderr)
		}
		if r := run(t, h.dir, "fleet", "push"); r.code != 0 {
			t.Fatal(r.stderr)
		}
	}
	// Ninety minutes on: beta used docs and both hosts reported since.
	later := time.Now().Add(90 * time.Minute).UTC()
	pgtest.Exec(t, c, "UPDATE "+schema+".hosts SET last_seen_at = $1", later)
	pgtest.Exec(t, c, "UPDATE "+schema+".host_copies SET last_used_at = $1 WHERE host = 'beta' AND name = 'docs'", later)
	type plan struct {
		Changes []struct{ Name, To, Reason string }
		Skipped string
	}
	curate := func(dir string) plan {
		t.Helper()
		r := run(t, dir, "curate", "--dry-run", "--json", "--now", later.Format(time.RFC3339))
		if r.code != 0 {
			t.Fatalf("curate: %d %s", r.code, r.stderr)
		}
		return decode[plan](t, r)
	}
	p := curate(alpha)
	if len(p.Changes) != 1 || p.Changes[0].Name != "pdf" || p.Changes[0].To != "stale" {
		t.Fatalf("alpha's plan: docs is used on beta, pdf idle 90m everywhere: %+v", p)
	}
	// Beta used docs ninety minutes "from now"; alpha's pdf use is 90m
	// old: on beta, pdf goes stale too, docs stays.
	if p := curate(beta); len(p.Changes) != 1 || p.Changes[0].Name != "pdf" {
		t.Fatalf("beta's plan: %+v", p)
	}
	// A view on beta is activity too, as it is on alpha itself.
	pgtest.Exec(t, c, "UPDATE "+schema+".host_copies SET last_viewed_at = $1 WHERE host = 'beta' AND name = 'pdf'", later)
	if p := curate(alpha); len(p.Changes) != 0 {
		t.Fatalf("alpha's plan with pdf viewed on beta: %+v", p)
	}
	// Too few hosts reported: curation waits and says why.
	pgtest.Exec(t, c, "UPDATE "+schema+".hosts SET last_seen_at = now() - interval '1 day' WHERE host = 'beta'")
	if p := curate(alpha); len(p.Changes) != 0 || !strings.Contains(p.Skipped, "fewer than curator.min_hosts 2") {
		t.Fatalf("with one host reporting: %+v", p)
	}
	// A table dropped by hand, with create: true set: setting it is no fix.
	pgtest.Exec(t, c, "DROP TABLE "+schema+".copy_stats CASCADE")
	if r := run(t, alpha, "fleet", "usage"); r.code != 1 || !strings.Contains(r.stderr, "lacks it") || strings.Contains(r.stderr, "set create: true") {
		t.Errorf("fleet usage with a table dropped: %d %s", r.code, r.stderr)
	}
}

// The team's scheduled job retires the marketplace skills the whole fleet
// left idle, on a branch of the real remote that moves them into .archive/.
func TestFleetCurateSourceGit(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	up := gittest.NewRepo(t, "main")
	for _, n := range []string{"pdf", "docs", "old"} {
		up.Skill("skills/"+n, "The "+n+" skill.")
	}
	up.Commit("three skills")
	up.AcceptPushes()
	schema := pgtest.Name(t)
	pgtest.Exec(t, c, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
	dsnFile := c.DSNFile(t, "postgres")
	host := func(id, extra string) string {
		ws := t.TempDir()
		skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), fmt.Sprintf(`repositories:
  - name: team
    git: %s
%sfleet:
  dsn_file: %s
  schema: %s
  create: true
  host: %s
curator:
  stale_after: 1h
  archive_after: 2h
  min_idle: 0s
`, up.URL(), extra, dsnFile, schema, id))
		if r := run(t, ws, "sync"); r.code != 0 {
			t.Fatalf("sync %s: %s", id, r.stderr)
		}
		return ws
	}
	alpha, beta := host("alpha", ""), host("beta", "")
	for _, h := range []struct{ dir, skill string }{{alpha, "pdf"}, {beta, "docs"}} {
		if r := run(t, h.dir, "use", h.skill); r.code != 0 {
			t.Fatal(r.stderr)
		}
		if r := run(t, h.dir, "fleet", "push"); r.code != 0 {
			t.Fatal(r.stderr)
		}
	}
	// Three hours pass for pdf and old; docs was used just now on beta.
	pgtest.Exec(t, c, "UPDATE "+schema+".host_copies SET first_seen_at = now() - interval '3 hours'")
	pgtest.Exec(t, c, "UPDATE "+schema+".host_copies SET last_used_at = now() - interval '3 hours' WHERE name = 'pdf'")
	type result struct {
		Hosts   int
		Retired []struct {
			Name  string
			Hosts int
		}
		Kept           int
		Skipped        string
		Branch, Commit string
	}
	r := run(t, alpha, "curate", "--source", "team", "--fleet", "--dry-run", "--json")
	plan := decode[result](t, r)
	if r.code != 0 || plan.Hosts != 2 || plan.Kept != 1 || len(plan.Retired) != 2 || plan.Retired[0].Name != "old" || plan.Retired[1].Name != "pdf" || plan.Retired[1].Hosts != 2 || plan.Branch != "" {
		t.Fatalf("dry run: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if refs := up.Git("for-each-ref", "--format=%(refname)"); strings.Contains(refs, "curate") {
		t.Fatalf("a dry run pushed: %s", refs)
	}
	// Judged half an hour ahead (docs is still within archive_after), but
	// the branch, the commit and the audit are dated by the clock.
	ahead := time.Now().UTC().Add(30 * time.Minute)
	r = run(t, alpha, "curate", "--source", "team", "--fleet", "--now", ahead.Format(time.RFC3339))
	branch := "skillsync/curate-" + time.Now().UTC().Format(time.DateOnly)
	if r.code != 0 || !strings.Contains(r.stdout, "retired 2, kept 1") || !strings.Contains(r.stdout, "branch: "+branch) {
		t.Fatalf("curate --source: %d %s %s", r.code, r.stdout, r.stderr)
	}
	clock := time.Now().Add(time.Minute).Unix()
	if at, err := strconv.ParseInt(strings.TrimSpace(up.Git("log", "-1", "--format=%at", branch)), 10, 64); err != nil || at > clock {
		t.Errorf("the curation's commit is dated %v, after the clock", at)
	}
	if r := run(t, alpha, "audit", "--op", "archived", "--json"); strings.Contains(r.stdout, ahead.Format("2006-01-02T15:04")) {
		t.Errorf("the audit is dated by --now: %s", r.stdout)
	}
	tree := up.Git("ls-tree", "-r", "--name-only", branch)
	if strings.TrimSpace(tree) != ".archive/skills/old/SKILL.md\n.archive/skills/pdf/SKILL.md\nskills/docs/SKILL.md" {
		t.Fatalf("the curation branch holds:\n%s", tree)
	}
	if msg := up.Git("log", "-1", "--format=%B", branch); !strings.Contains(msg, "- old: never used, on 2 hosts") || !strings.Contains(msg, "- pdf: last used ") {
		t.Fatalf("commit message:\n%s", msg)
	}
	if main := up.Git("ls-tree", "-r", "--name-only", "main"); !strings.Contains(main, "skills/pdf/SKILL.md") {
		t.Fatalf("main changed without publish: direct:\n%s", main)
	}
	if r := run(t, alpha, "audit", "--op", "archived", "--json"); strings.Count(r.stdout, "moved into .archive/ upstream") != 2 {
		t.Fatalf("audit: %s", r.stdout)
	}
	// A host on the curation branch never sees the archived skills.
	gamma := host("gamma", "    ref: "+branch+"\n")
	if r := run(t, gamma, "list"); !strings.Contains(r.stdout, "docs") || strings.Contains(r.stdout, "pdf") || strings.Contains(r.stdout, "old") {
		t.Fatalf("list on the curation branch:\n%s", r.stdout)
	}
	// A second run the same day: the branch exists, nothing is overwritten.
	if r := run(t, alpha, "curate", "--source", "team", "--fleet"); r.code == 0 {
		t.Fatalf("a second curation over the same branch: %s", r.stdout)
	}
	if r := run(t, alpha, "curate", "--source", "team"); r.code != 2 {
		t.Fatalf("--source without --fleet: %d", r.code)
	}
}

// A postgres source's fleet-idle skills are archived in one transaction,
// and restore --source brings one back.
func TestFleetCurateSourcePostgres(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	w := newPGWorkspace(t, c, "", "")
	fleetSchema := pgtest.Name(t) + "_fleet"
	pgtest.Exec(t, c, "DROP SCHEMA IF EXISTS "+fleetSchema+" CASCADE")
	w.writeConfig(t, "team", w.schema, "", fmt.Sprintf("fleet:\n  dsn_file: %s\n  schema: %s\n  create: true\n  host: solo\ncurator:\n  stale_after: 1h\n  archive_after: 2h\n  min_idle: 0s\n  min_hosts: 1\n", w.dsnFile, fleetSchema))
	for _, n := range []string{"keep", "old"} {
		publish(t, w.dir, newSkill(t, n, "The "+n+" skill."), "team")
	}
	if r := run(t, w.dir, "sync"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := run(t, w.dir, "use", "keep"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := run(t, w.dir, "fleet", "push"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	pgtest.Exec(t, c, "UPDATE "+fleetSchema+".host_copies SET first_seen_at = now() - interval '3 hours 10 minutes'")
	r := run(t, w.dir, "curate", "--source", "team", "--fleet")
	if r.code != 0 || !strings.Contains(r.stdout, "across the fleet (never used on any host, held by 1 host)") || !strings.Contains(r.stdout, "retired 1, kept 1") {
		t.Fatalf("curate --source team --fleet: %d %s%s", r.code, r.stdout, r.stderr)
	}
	if n := pgtest.QueryValue[int64](t, c, "SELECT count(*) FROM "+w.schema+".skills WHERE name = '.archive.old'"); n != 1 {
		t.Fatalf("archived rows: %d", n)
	}
	if r := run(t, w.dir, "sync"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := run(t, w.dir, "list"); strings.Contains(r.stdout, "old") || !strings.Contains(r.stdout, "keep") {
		t.Fatalf("list after the retirement:\n%s", r.stdout)
	}
	r = run(t, w.dir, "restore", "--source", "team", "old")
	if r.code != 0 || !strings.Contains(r.stdout, "restored old in source team") {
		t.Fatalf("restore --source: %d %s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, w.dir, "list"); !strings.Contains(r.stdout, "old") {
		t.Fatalf("list after the restore:\n%s", r.stdout)
	}
	if r := run(t, w.dir, "restore", "--source", "team", "old"); r.code == 0 {
		t.Fatal("a second restore of a skill that is back succeeded")
	}
	if r := run(t, w.dir, "audit", "--json"); !strings.Contains(r.stdout, "archived in source team") || !strings.Contains(r.stdout, "brought back into source team") {
		t.Fatalf("audit: %s", r.stdout)
	}
}
