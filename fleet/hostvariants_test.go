package fleet_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/fleet"
	"github.com/skillsync/skillsync/internal/pgtest"
)

// v2Schema makes a fresh schema at version 2, as a skillsync before
// canonical host ids left it, and returns its name.
func v2Schema(t *testing.T, c *pgtest.Cluster) string {
	t.Helper()
	schema := pgtest.Name(t)
	pgtest.Exec(t, c, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
	pgtest.Exec(t, c, "CREATE SCHEMA "+schema+"; CREATE TABLE "+schema+".schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
	for v := range 2 {
		pgtest.Exec(t, c, strings.ReplaceAll(fleet.Migrations[v], "{S}", `"`+schema+`"`))
		pgtest.Exec(t, c, "INSERT INTO "+schema+".schema_migrations (version) VALUES ($1)", v+1)
	}
	return schema
}

// TestHostSpellingsAreOneHost: pushes under ids that differ only in case
// or normalization are one host's; each spelling's counters are its own
// (two workspaces of the host), so they add up, and a spelling's push
// sent again counts nothing. A lookalike from another script is another
// host, shown with a warning.
func TestHostSpellingsAreOneHost(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	for _, tc := range []struct {
		name, a, b string
		one        bool
		canonical  string
	}{
		{"case", "Build-01", "build-01", true, "build-01"},
		{"upper", "BUILD-01", "Build-01", true, "build-01"},
		{"nfc_nfd", "caf\u00e9-7", "cafe\u0301-7", true, "caf\u00e9-7"},
		{"greek_case", "\u03a3\u039f\u03a6\u0399\u0391", "\u03c3\u03bf\u03c6\u03b9\u03b1", true, "\u03c3\u03bf\u03c6\u03b9\u03b1"},
		{"kelvin", "\u212aiosk", "kiosk", true, "kiosk"},
		{"cyrillic_lookalike", "b\u0430ckup", "backup", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := &warnings{}
			s, _ := open(t, c, w)
			ctx := context.Background()
			now := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
			pdf := mcopy(t, "team", "pdf")
			// A workspace under each spelling: 2 uses and 5, each
			// pushed twice (a retry after a lost answer).
			for _, p := range []struct {
				host string
				uses int64
			}{{tc.a, 2}, {tc.b, 5}, {tc.a, 2}, {tc.b, 5}} {
				if _, err := s.Push(ctx, hb(p.host), []fleet.Record{{Copy: pdf, Uses: p.uses, LastUsedAt: now, State: "active"}}); err != nil {
					t.Fatal(err)
				}
			}
			u := usageOf(t, s, fleet.UsageOptions{Since: now.Add(-time.Hour)})[pdf.String()]
			hosts, err := s.Status(ctx, fleet.StatusOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.one {
				if u.Uses != 7 || u.Hosts != 1 || u.Placed != 1 {
					t.Errorf("pdf pushed by %q then %q: %d uses on %d hosts (%d placing), want 7 on 1", tc.a, tc.b, u.Uses, u.Hosts, u.Placed)
				}
				if len(hosts) != 1 || hosts[0].Host != tc.canonical || len(hosts[0].Lookalikes) != 0 {
					t.Errorf("fleet status: %+v, want one host %q", hosts, tc.canonical)
				}
				if n, err := s.Reporting(ctx, now.Add(-time.Hour)); err != nil || n != 1 {
					t.Errorf("hosts reporting: %d %v, want 1", n, err)
				}
				return
			}
			if u.Uses != 7 || u.Hosts != 2 {
				t.Errorf("pdf pushed by lookalikes %q and %q: %d uses on %d hosts, want 7 on 2", tc.a, tc.b, u.Uses, u.Hosts)
			}
			if len(hosts) != 2 || len(hosts[0].Lookalikes) != 1 || len(hosts[1].Lookalikes) != 1 {
				t.Fatalf("fleet status of lookalikes: %+v, want two hosts naming each other", hosts)
			}
			if got := fleet.Lookalikes(hosts); len(got) != 1 || !strings.Contains(got[0], "look alike") || !strings.Contains(got[0], "U+0430") {
				t.Errorf("the lookalikes' warning: %q", got)
			}
		})
	}
}

// TestMigrateMergesHostVariants: a version 2 schema whose hosts pushed
// under spellings of one id upgrades to one host per canonical id, with
// their counters added and the day buckets untouched: no use lost or
// counted twice; the host's next push counts only what grew. A use dated
// ahead of the server comes back to now; a lookalike stays a host.
func TestMigrateMergesHostVariants(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	ctx := context.Background()
	schema := v2Schema(t, c)
	now := time.Now().UTC().Truncate(time.Second)
	h := func(d time.Duration) time.Time { return now.Add(d) }
	nfd, nfc := "cafe\u0301-7", "caf\u00e9-7"
	pgtest.Exec(t, c, "INSERT INTO "+schema+".hosts (host, version, last_seen_at, seq) VALUES ('Build-01', 'v1', $1, 3), ('build-01', 'v2', $2, 4), ($3, 'v2', $2, 1), ($4, 'v2', $1, 1), ('B\u0430ckup', 'v2', $2, 1), ('backup', 'v2', $2, 1), ('Solo-X', 'v2', $2, 1)",
		h(-time.Hour), h(-time.Minute), nfd, nfc)
	pgtest.Exec(t, c, "INSERT INTO "+schema+".host_sources (host, source, revision, status) VALUES ('Build-01', 'team', 'old', 'ok'), ('build-01', 'team', 'new', 'ok')")
	// The rows as pushes made them: host_copies' triggers fill the
	// rollups.
	pgtest.Exec(t, c, `INSERT INTO `+schema+`.host_copies (host, layer, owner, name, uses, views, last_used_at, state, pinned, updated_at) VALUES
	('Build-01', 'marketplace', 'team', 'pdf', 5, 1, $1, 'stale', true, $1),
	('Build-01', 'marketplace', 'team', 'doc', 1, 0, $2, 'active', false, $2),
	('build-01', 'marketplace', 'team', 'pdf', 2, 0, $3, 'active', false, $3),
	($4, 'marketplace', 'team', 'pdf', 4, 0, $5, 'active', false, $5),
	($6, 'marketplace', 'team', 'pdf', 1, 0, $2, 'active', false, $2),
	($8, 'marketplace', 'team', 'pdf', 3, 0, $3, 'active', false, $3),
	('backup', 'marketplace', 'team', 'pdf', 6, 0, $3, 'active', false, $3),
	('Solo-X', 'marketplace', 'team', 'pdf', 1, 0, $7, 'active', false, $3)`,
		h(-48*time.Hour), h(-40*24*time.Hour), h(-time.Hour), nfd, h(-3*time.Hour), nfc, h(2*time.Hour), "B\u0430ckup")

	w := &warnings{}
	s, err := fleet.Open(ctx, fleet.Config{DSNFile: c.DSNFile(t, "postgres"), Schema: schema, Create: true, Timeout: 5 * time.Second, Warn: w.add, FoldEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before := usageOf(t, s, fleet.UsageOptions{Since: now.Add(-365 * 24 * time.Hour)})
	pdf := before["marketplace:team/pdf"]
	if pdf.Uses != 22 || pdf.Views != 1 || before["marketplace:team/doc"].Uses != 1 {
		t.Fatalf("after the upgrade, every use: pdf %+v, doc %+v; want 22 uses of pdf and 1 of doc, as pushed", pdf, before["marketplace:team/doc"])
	}
	if pdf.Placed != 5 || !pdf.Pinned || pdf.LastUsedAt == nil || pdf.LastUsedAt.After(time.Now()) {
		t.Errorf("pdf after the upgrade: placed by %d hosts (want 5), pinned %v, last used %v (not after now)", pdf.Placed, pdf.Pinned, pdf.LastUsedAt)
	}
	month := usageOf(t, s, fleet.UsageOptions{Since: now.Add(-30 * 24 * time.Hour)})["marketplace:team/pdf"]
	if month.Hosts != 5 {
		t.Errorf("hosts that used pdf in 30 days: %d, want 5 (build-01, café-7, the two backups, solo-x)", month.Hosts)
	}
	conn := pgtest.Connect(t, c)
	rows, err := conn.Query(ctx, "SELECT host, name, uses, pinned, state FROM "+schema+".host_copies ORDER BY host, name")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var host, name, state string
		var uses int64
		var pinned bool
		if err := rows.Scan(&host, &name, &uses, &pinned, &state); err != nil {
			t.Fatal(err)
		}
		got = append(got, host+" "+name+" "+state+" "+map[bool]string{true: "pinned", false: "-"}[pinned]+" "+string(rune('0'+uses)))
	}
	want := []string{"backup pdf active - 6", "build-01 doc active - 1", "build-01 pdf active pinned 7", "b\u0430ckup pdf active - 3", nfc + " pdf active - 5", "solo-x pdf active - 1"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("host_copies after the upgrade:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	hosts, err := s.Status(ctx, fleet.StatusOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range hosts {
		ids = append(ids, h.Host)
		if h.Host == "build-01" && (h.Version != "v2" || len(h.Sources) != 1 || h.Sources[0].Revision != "new") {
			t.Errorf("build-01 after the merge: %+v, want the heartbeat and sources of the id seen last", h)
		}
	}
	if strings.Join(ids, " ") != "backup build-01 b\u0430ckup "+nfc+" solo-x" {
		t.Errorf("hosts after the upgrade: %q", ids)
	}
	if len(fleet.Lookalikes(hosts)) != 1 {
		t.Errorf("lookalikes: %q, want the backups", fleet.Lookalikes(hosts))
	}
	if !strings.Contains(w.all(), `"Build-01", "build-01"`) || !strings.Contains(w.all(), "merged") {
		t.Errorf("no warning names the merged ids:\n%s", w.all())
	}
	// Folding the deltas changes no answer.
	if err := s.Fold(ctx); err != nil {
		t.Fatal(err)
	}
	if after := usageOf(t, s, fleet.UsageOptions{Since: now.Add(-365 * 24 * time.Hour)}); show(after) != show(before) {
		t.Errorf("fleet usage before the fold:\n%s\nafter:\n%s", show(before), show(after))
	}
	// The merged host pushes its counter (7) and 3 uses more, under any
	// spelling: 3 count.
	res, err := s.Push(ctx, hb("BUILD-01"), []fleet.Record{{Copy: mcopy(t, "team", "pdf"), Uses: 10, LastUsedAt: now, State: "active"}})
	if err != nil || res.Uses != 3 {
		t.Fatalf("build-01's push after the upgrade: %+v %v, want 3 uses new", res, err)
	}
	if n := pgtest.QueryValue[int64](t, c, "SELECT count(*) FROM "+schema+".hosts"); n != 5 {
		t.Errorf("%d host rows after a push under another spelling, want 5", n)
	}
	// A push of a skillsync before this version, in flight as the schema
	// was migrated, cannot bring a merged spelling back: its counters
	// would count again.
	if _, err := conn.Exec(ctx, "INSERT INTO "+schema+".hosts (host, seq, pushed_by) VALUES ('Build-01', 1, 4)"); err == nil || !strings.Contains(err.Error(), "hosts_host_canonical") {
		t.Errorf("a host row Build-01 after the upgrade: %v, want it refused", err)
	}
	// A row of another spelling written by hand (NFD) is the same host to
	// the readers.
	pgtest.Exec(t, c, "INSERT INTO "+schema+".hosts (host, version, last_seen_at, pushed_by) VALUES ($1, 'by hand', now() - interval '1 hour', 4)", nfd)
	hosts, err = s.Status(ctx, fleet.StatusOptions{})
	if err != nil || len(hosts) != 5 || hosts[3].Host != nfc || hosts[3].Version != "v2" {
		t.Errorf("status with a hand-written row of café-7 in NFD: %+v %v, want 5 hosts, café-7 as pushed", hosts, err)
	}
	if !strings.Contains(w.all(), "are one host") {
		t.Errorf("no warning names the hand-written row:\n%s", w.all())
	}
	if n, err := s.Reporting(ctx, now.Add(-24*time.Hour)); err != nil || n != 5 {
		t.Errorf("hosts reporting with a hand-written row of café-7 in NFD: %d %v, want 5", n, err)
	}
}

// TestPushedFileFoldsSpellings: a workspace whose id changed case under
// a skillsync before canonical ids kept the old id's counters apart in
// its pushed file (earlier) and sent the new id's counter less them; the
// store merged the two ids' rows, adding them, so the workspace's push
// now sends the sum: its new uses count, once.
func TestPushedFileFoldsSpellings(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	ctx := context.Background()
	schema := v2Schema(t, c)
	at := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	pdf := mcopy(t, "team", "pdf")
	// Build-01 pushed 5 uses, then the workspace became build-01 and
	// pushed 2 more (its counter, 7, less 5).
	pgtest.Exec(t, c, "INSERT INTO "+schema+".hosts (host, seq) VALUES ('Build-01', 1), ('build-01', 1)")
	pgtest.Exec(t, c, "INSERT INTO "+schema+".host_copies (host, layer, owner, name, uses, last_used_at, state) VALUES ('Build-01', 'marketplace', 'team', 'pdf', 5, $1, 'active'), ('build-01', 'marketplace', 'team', 'pdf', 2, $1, 'active')", at)
	s, err := fleet.Open(ctx, fleet.Config{DSNFile: c.DSNFile(t, "postgres"), Schema: schema, Create: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec := func(uses int64) map[string]any {
		return map[string]any{"u": uses, "v": 0, "lu": at.Unix(), "lv": time.Time{}.Unix(), "s": "active"}
	}
	file, err := json.Marshal(map[string]any{"version": 1, "host": "build-01", "store": s.Identity(),
		"records": map[string]any{pdf.String(): rec(2)}, "earlier": map[string]any{"Build-01": map[string]any{pdf.String(): rec(5)}}})
	if err != nil {
		t.Fatal(err)
	}
	pushed := filepath.Join(t.TempDir(), ".fleet-pushed.json")
	if err := os.WriteFile(pushed, file, 0o644); err != nil {
		t.Fatal(err)
	}
	// 3 uses since.
	u := &curator.Usage{Skills: map[curator.Copy]*curator.SkillUsage{pdf: {UseCount: 10, LastUsedAt: &at, State: curator.Active}}}
	for _, host := range []string{"build-01", "Build-01"} {
		if _, err := fleet.PreparePush(hb(host), u, pushed, s.Identity(), func(string) {}).Send(ctx, s); err != nil {
			t.Fatal(err)
		}
		if got := usageOf(t, s, fleet.UsageOptions{Since: at.Add(-time.Hour)})[pdf.String()]; got.Uses != 10 || got.Hosts != 1 {
			t.Errorf("pushed as %s: pdf has %d uses on %d hosts in the fleet, want 10 on 1", host, got.Uses, got.Hosts)
		}
	}
}

// TestForkDoesNotMakeHostsBehind: a host on a fork that keeps the
// source's name reports revisions of the fork; the source's hosts are
// compared with the source's newest revision, not the fork's. A
// revision first seen before remotes keeps its time.
func TestForkDoesNotMakeHostsBehind(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	s, schema := open(t, c, nil)
	ctx := context.Background()
	team, fork := fleet.RemoteKey("https://git.example.com/team/skills.git", "main"), fleet.RemoteKey("https://git.example.com/mallory/skills.git", "main")
	if _, err := s.ServerTime(ctx); err != nil { // creates the schema
		t.Fatal(err)
	}
	// Revisions a skillsync before remotes saw: old, then new.
	pgtest.Exec(t, c, "INSERT INTO "+schema+".revisions (source, remote, revision, first_seen_at) VALUES ('team', '', 'old', now() - interval '2 days'), ('team', '', 'new', now() - interval '1 day')")
	for _, p := range []struct{ host, rev, remote string }{{"b", "new", team}, {"a", "old", team}, {"fork", "fff", fork}} {
		h := hb(p.host)
		h.Sources = []fleet.SourceState{{Source: "team", Revision: p.rev, Status: "ok", Remote: p.remote}}
		if _, err := s.Push(ctx, h, nil); err != nil {
			t.Fatal(err)
		}
	}
	hosts, err := s.Status(ctx, fleet.StatusOptions{})
	if err != nil {
		t.Fatal(err)
	}
	behind := map[string]bool{}
	for _, h := range hosts {
		behind[h.Host] = h.Sources[0].Behind
	}
	if want := map[string]bool{"a": true, "b": false, "fork": false}; len(behind) != 3 || behind["a"] != want["a"] || behind["b"] != want["b"] || behind["fork"] != want["fork"] {
		t.Errorf("behind: %v, want %v", behind, want)
	}
}
