package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/fleet"
	"github.com/skillsync/skillsync/internal/pgtest"
)

// A schema made by a skillsync at version 1 (usage per host and day)
// upgrades with create: true: its buckets and hosts carry into the
// rollups, and pushes go on counting from where they were.
func TestMigrateFromVersion1(t *testing.T) {
	c := pgCluster.Get(t)
	ctx := context.Background()
	schema := pgtest.Name(t)
	pgtest.Exec(t, c, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
	pgtest.Exec(t, c, "CREATE SCHEMA "+schema+"; CREATE TABLE "+schema+".schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
	pgtest.Exec(t, c, strings.ReplaceAll(fleet.Migrations[0], "{S}", `"`+schema+`"`))
	pgtest.Exec(t, c, "INSERT INTO "+schema+".schema_migrations (version) VALUES (1)")
	now := time.Now().UTC().Truncate(time.Second)
	old := now.Add(-40 * 24 * time.Hour)
	// What version 1's pushes left: a used pdf 5 times today, b twice 40
	// days ago and pins it.
	pgtest.Exec(t, c, "INSERT INTO "+schema+".hosts (host) VALUES ('a'), ('b')")
	pgtest.Exec(t, c, "INSERT INTO "+schema+".host_copies (host, layer, owner, name, uses, last_used_at, state, pinned) VALUES ('a', 'marketplace', 'team', 'pdf', 5, $1, 'active', false), ('b', 'marketplace', 'team', 'pdf', 2, $2, 'stale', true), ('b', 'marketplace', 'team', 'gone', 1, $2, 'archived', false)", now, old)
	pgtest.Exec(t, c, "INSERT INTO "+schema+".usage_days (host, layer, owner, name, day, uses) VALUES ('a', 'marketplace', 'team', 'pdf', $1, 5), ('b', 'marketplace', 'team', 'pdf', $2, 2), ('b', 'marketplace', 'team', 'gone', $2, 1)", now, old)

	// Without create: the old schema is refused and left alone.
	dsnFile := c.DSNFile(t, "postgres")
	s0, err := fleet.Open(ctx, fleet.Config{DSNFile: dsnFile, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer s0.Close()
	if _, err := s0.Usage(ctx, fleet.UsageOptions{}); !errors.Is(err, fleet.ErrSchemaVersion) || !strings.Contains(err.Error(), "create: true") {
		t.Fatalf("a version 1 schema without create: %v", err)
	}
	s, err := fleet.Open(ctx, fleet.Config{DSNFile: dsnFile, Schema: schema, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	u := usageOf(t, s, fleet.UsageOptions{Since: now.Add(-30 * 24 * time.Hour)})
	pdf := u["marketplace:team/pdf"]
	if pdf.Uses != 5 || pdf.Hosts != 1 || pdf.Placed != 2 || !pdf.Pinned || pdf.LastUsedAt == nil || !pdf.LastUsedAt.Equal(now) {
		t.Fatalf("pdf after the upgrade, last 30 days: %+v", pdf)
	}
	if g := u["marketplace:team/gone"]; g.Uses != 0 || g.Hosts != 0 || g.Placed != 0 || g.Name != "gone" {
		t.Fatalf("gone after the upgrade: %+v", g)
	}
	if pdf := usageOf(t, s, fleet.UsageOptions{Since: now.Add(-50 * 24 * time.Hour)})["marketplace:team/pdf"]; pdf.Uses != 7 || pdf.Hosts != 2 {
		t.Fatalf("pdf after the upgrade, last 50 days: %+v", pdf)
	}
	// a pushes its counter again, then 3 more uses: only the 3 count.
	for _, n := range []int64{5, 8} {
		if _, err := s.Push(ctx, hb("a"), []fleet.Record{{Copy: mcopy(t, "team", "pdf"), Uses: n, LastUsedAt: now, State: "active"}}); err != nil {
			t.Fatal(err)
		}
	}
	if pdf := usageOf(t, s, fleet.UsageOptions{})["marketplace:team/pdf"]; pdf.Uses != 8 || pdf.Hosts != 1 {
		t.Fatalf("pdf after a push on the upgraded schema: %+v", pdf)
	}
	if n := pgtest.QueryValue[int64](t, c, "SELECT count(*) FROM pg_tables WHERE schemaname = $1 AND tablename = 'usage_days'", schema); n != 0 {
		t.Fatal("usage_days is still there")
	}
}

// The rollups fleet usage reads stay what an aggregate over every host's
// rows says, through pushes from many hosts and direct writes to the
// rows (an operator's fix, a host deleted with its rows).
func TestRollupsMatchTheRows(t *testing.T) {
	c := pgCluster.Get(t)
	_, schema := open(t, c, nil)
	ctx := context.Background()
	// Pushes that never fold by themselves, so that the reads below
	// add deltas to the rollups.
	s, err := fleet.Open(ctx, fleet.Config{DSNFile: c.DSNFile(t, "postgres"), Schema: schema, Create: true, FoldEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now().UTC().Truncate(time.Second)
	rng := rand.New(rand.NewPCG(1, 2))
	counts := map[string][]int64{}
	for round := range 4 {
		if round == 3 {
			// A host retired with its rows (it pushes no more: one
			// that pushed again would count its counters anew).
			pgtest.Exec(t, c, "DELETE FROM "+schema+".hosts WHERE host = 'h4'")
		}
		for h := range 5 {
			host := fmt.Sprintf("h%d", h)
			if round == 3 && h == 4 {
				continue
			}
			if counts[host] == nil {
				counts[host] = make([]int64, 12)
			}
			var recs []fleet.Record
			for i := range counts[host] {
				if rng.IntN(3) == 0 {
					continue
				}
				counts[host][i] += int64(rng.IntN(4))
				at := now.Add(-time.Duration(rng.IntN(60*24)) * time.Hour)
				state := "active"
				if rng.IntN(5) == 0 {
					state = "archived"
				}
				recs = append(recs, fleet.Record{Copy: mcopy(t, "team", fmt.Sprintf("s%d", i)), Uses: counts[host][i], Views: counts[host][i] / 2,
					LastUsedAt: at, LastViewedAt: at.Add(-time.Hour), State: state, Pinned: rng.IntN(7) == 0})
			}
			if _, err := s.Push(ctx, hb(host), recs); err != nil {
				t.Fatal(err)
			}
		}
		switch round {
		case 1:
			// An operator moves a last use back, and one forward.
			pgtest.Exec(t, c, "UPDATE "+schema+".host_copies SET last_used_at = last_used_at - interval '20 days', first_seen_at = first_seen_at + interval '1 hour' WHERE name IN ('s1', 's2')")
			pgtest.Exec(t, c, "UPDATE "+schema+".host_copies SET last_used_at = now() WHERE name = 's3' AND host = 'h0'")
		}
	}
	since := now.Add(-30 * 24 * time.Hour)
	got := usageOf(t, s, fleet.UsageOptions{Since: since})
	// Folding the deltas into the rollups changes no answer.
	if n := pgtest.QueryValue[int64](t, c, "SELECT count(*) FROM "+schema+".copy_deltas"); n == 0 {
		t.Fatal("no deltas wait for a fold: the test reads only folded rollups")
	}
	if err := s.Fold(ctx); err != nil {
		t.Fatal(err)
	}
	if n := pgtest.QueryValue[int64](t, c, "SELECT count(*) FROM "+schema+".copy_deltas"); n != 0 {
		t.Fatalf("%d deltas left after a fold", n)
	}
	folded := usageOf(t, s, fleet.UsageOptions{Since: since})
	if show(folded) != show(got) {
		t.Fatalf("fleet usage before the fold:\n%s\nafter:\n%s", show(got), show(folded))
	}
	type agg struct {
		hosts, placed int
		pinned        bool
		last          *time.Time
		first         time.Time
	}
	conn := pgtest.Connect(t, c)
	rows, err := conn.Query(ctx, `SELECT name, count(*) FILTER (WHERE last_used_at >= date_trunc('day', $1::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')::int,
	count(*) FILTER (WHERE state <> 'archived')::int, bool_or(pinned), max(last_used_at), min(first_seen_at)
FROM `+schema+`.host_copies GROUP BY name`, since)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]agg{}
	for rows.Next() {
		var name string
		var a agg
		if err := rows.Scan(&name, &a.hosts, &a.placed, &a.pinned, &a.last, &a.first); err != nil {
			t.Fatal(err)
		}
		want[name] = a
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(want) != 12 {
		t.Fatalf("fleet usage has %d copies, the rows %d", len(got), len(want))
	}
	for name, w := range want {
		g := got["marketplace:team/"+name]
		if g.Hosts != w.hosts || g.Placed != w.placed || g.Pinned != w.pinned || !g.FirstSeenAt.Equal(w.first) ||
			(g.LastUsedAt == nil) != (w.last == nil) || g.LastUsedAt != nil && !g.LastUsedAt.Equal(*w.last) {
			t.Errorf("%s: fleet usage says hosts %d placed %d pinned %v last %v first %v; the rows say %+v", name, g.Hosts, g.Placed, g.Pinned, g.LastUsedAt, g.FirstSeenAt, w)
		}
	}
	// Every use pushed is in the buckets, deleted hosts' too.
	var pushed int64
	for _, cs := range counts {
		for _, n := range cs {
			pushed += n
		}
	}
	all := usageOf(t, s, fleet.UsageOptions{Since: now.Add(-365 * 24 * time.Hour)})
	var total int64
	for _, u := range all {
		total += u.Uses
	}
	if total != pushed {
		t.Fatalf("the buckets hold %d uses, the hosts pushed %d", total, pushed)
	}
}

// show prints a fleet usage answer by value, in key order.
func show(m map[string]fleet.SkillUsage) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t := func(p *time.Time) string {
		if p == nil {
			return "-"
		}
		return p.UTC().Format(time.RFC3339)
	}
	var b strings.Builder
	for _, k := range keys {
		u := m[k]
		fmt.Fprintf(&b, "%s uses %d views %d hosts %d placed %d pinned %v last use %s view %s first %s\n",
			k, u.Uses, u.Views, u.Hosts, u.Placed, u.Pinned, t(u.LastUsedAt), t(u.LastViewedAt), u.FirstSeenAt.UTC().Format(time.RFC3339))
	}
	return b.String()
}
