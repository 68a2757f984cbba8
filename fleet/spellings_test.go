package fleet_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/fleet"
	"github.com/skillsync/skillsync/internal/pgtest"
)

// spelledWorkspace is one workspace pushing under its own spelling of a
// host id, with its own usage and pushed file.
type spelledWorkspace struct {
	host   string
	pushed string
	uses   int64
}

func (w *spelledWorkspace) push(t *testing.T, s *fleet.Store, at time.Time) {
	t.Helper()
	pdf := mcopy(t, "team", "pdf")
	u := &curator.Usage{Skills: map[curator.Copy]*curator.SkillUsage{pdf: {UseCount: int(w.uses), LastUsedAt: &at, State: curator.Active}}}
	if _, err := fleet.PreparePush(hb(w.host), u, w.pushed, s.Identity(), func(string) {}).Send(context.Background(), s); err != nil {
		t.Fatalf("push of %s: %v", w.host, err)
	}
}

// TestTwoSpellingsOfOneHostAddUp: two workspaces of one machine pushing
// under two spellings of its id are one host, and their counters add up:
// every use counts once, whichever pushes first, however often a push
// goes again (a retry whose answer was lost, sent from the pushed file
// as it was before). Before spellings were kept apart, the store kept
// the larger of the two counters and lost the other's uses.
func TestTwoSpellingsOfOneHostAddUp(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	for _, tc := range []struct {
		name, a, b string
	}{
		{"case", "Build-01", "build-01"},
		{"nfd_nfc", "cafe\u0301-7", "caf\u00e9-7"},
		{"upper_both", "BUILD-01", "Build-01"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := open(t, c, nil)
			at := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
			dir := t.TempDir()
			a := &spelledWorkspace{host: tc.a, pushed: filepath.Join(dir, "a.json")}
			b := &spelledWorkspace{host: tc.b, pushed: filepath.Join(dir, "b.json")}
			check := func(step string) {
				t.Helper()
				u := usageOf(t, s, fleet.UsageOptions{Since: at.Add(-time.Hour)})["marketplace:team/pdf"]
				if u.Uses != a.uses+b.uses || u.Hosts != 1 {
					t.Fatalf("%s: pdf has %d uses on %d hosts, want %d (%d + %d) on 1", step, u.Uses, u.Hosts, a.uses+b.uses, a.uses, b.uses)
				}
			}
			a.uses = 5
			a.push(t, s, at)
			b.uses = 3
			b.push(t, s, at)
			check("5 and 3")
			// Each sends its state again: nothing counts twice.
			a.push(t, s, at)
			b.push(t, s, at)
			check("5 and 3 again")
			// Both grow, the smaller past the larger's old counter.
			b.uses = 9
			b.push(t, s, at)
			a.uses = 6
			a.push(t, s, at)
			check("6 and 9")
			// A push whose answer was lost: the store took it, the
			// pushed file did not move, and it goes again.
			before, err := os.ReadFile(b.pushed)
			if err != nil {
				t.Fatal(err)
			}
			b.uses = 12
			b.push(t, s, at)
			if err := os.WriteFile(b.pushed, before, 0o644); err != nil {
				t.Fatal(err)
			}
			b.push(t, s, at)
			check("6 and 12, 12 sent twice")
			if err := s.Fold(context.Background()); err != nil {
				t.Fatal(err)
			}
			check("after a fold")
			// Both spellings' pushes at once, each sent by four
			// pushers (a daemon and a user's fleet push): they
			// serialize on the host's row, and count once each.
			a.uses, b.uses = 20, 30
			pdf := mcopy(t, "team", "pdf")
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for i := range 8 {
				w := []*spelledWorkspace{a, b}[i%2]
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := s.Push(context.Background(), hb(w.host), []fleet.Record{{Copy: pdf, Uses: w.uses, LastUsedAt: at, State: "active"}})
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
			check("20 and 30, pushed concurrently")
		})
	}
}

// TestSpellingChangeCountsOnce: a workspace whose id changes spelling
// (fleet.host edited from Build-01 to build-01) sends what grew since,
// not its counters again under the new spelling, and back again.
func TestSpellingChangeCountsOnce(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	s, _ := open(t, c, nil)
	at := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	w := &spelledWorkspace{pushed: filepath.Join(t.TempDir(), "pushed.json")}
	for i, host := range []string{"Build-01", "build-01", "build-01", "Build-01", "BUILD-01"} {
		w.host = host
		w.uses = int64(4 + i)
		w.push(t, s, at)
		if u := usageOf(t, s, fleet.UsageOptions{Since: at.Add(-time.Hour)})["marketplace:team/pdf"]; u.Uses != w.uses || u.Hosts != 1 {
			t.Fatalf("pushed %d uses as %s: the fleet has %d on %d hosts, want %d on 1", w.uses, host, u.Uses, u.Hosts, w.uses)
		}
	}
}

// v3Schema makes a fresh schema at version 3, as a skillsync before
// spellings were kept apart left it, and returns its name.
func v3Schema(t *testing.T, c *pgtest.Cluster) string {
	t.Helper()
	schema := pgtest.Name(t)
	pgtest.Exec(t, c, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
	pgtest.Exec(t, c, "CREATE SCHEMA "+schema+"; CREATE TABLE "+schema+".schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
	for v := range 3 {
		pgtest.Exec(t, c, strings.ReplaceAll(fleet.Migrations[v], "{S}", `"`+schema+`"`))
		pgtest.Exec(t, c, "INSERT INTO "+schema+".schema_migrations (version) VALUES ($1)", v+1)
	}
	return schema
}

// TestMigrateKeepsSpellingsApart: a version 3 schema where two
// workspaces of build-01, spelled Build-01 and build-01, pushed 4 and 6
// uses kept only the larger (6). Upgraded, their next pushes (5 and 7)
// count what grew, taking what the host held as counted once: the fleet
// ends with their sum, 12, none counted twice on a push sent again. A
// host of one workspace counts only what grew, and a push of a skillsync
// before version 4 in flight at the upgrade is refused whole.
func TestMigrateKeepsSpellingsApart(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	ctx := context.Background()
	schema := v3Schema(t, c)
	at := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	pgtest.Exec(t, c, "INSERT INTO "+schema+".hosts (host, seq) VALUES ('build-01', 4), ('solo', 1)")
	pgtest.Exec(t, c, `INSERT INTO `+schema+`.host_copies (host, layer, owner, name, uses, views, last_used_at, state) VALUES
	('build-01', 'marketplace', 'team', 'pdf', 6, 0, $1, 'active'),
	('solo', 'marketplace', 'team', 'pdf', 10, 2, $1, 'active')`, at)
	s, err := fleet.Open(ctx, fleet.Config{DSNFile: c.DSNFile(t, "postgres"), Schema: schema, Create: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	total := func() int64 {
		t.Helper()
		return usageOf(t, s, fleet.UsageOptions{Since: at.Add(-time.Hour)})["marketplace:team/pdf"].Uses
	}
	if n := total(); n != 16 {
		t.Fatalf("after the upgrade: %d uses of pdf, want 16 as pushed", n)
	}
	// The pushed files as a skillsync of schema version 3 left them: the
	// host named as the store keyed it.
	dir := t.TempDir()
	file := func(name, host string, uses int64) string {
		rec := map[string]any{"u": uses, "v": 0, "lu": at.Unix(), "lv": time.Time{}.Unix(), "s": "active"}
		data, err := json.Marshal(map[string]any{"version": 1, "host": host, "store": s.Identity(), "records": map[string]any{"marketplace:team/pdf": rec}})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	upper := &spelledWorkspace{host: "Build-01", pushed: file("upper.json", "build-01", 4), uses: 5}
	lower := &spelledWorkspace{host: "build-01", pushed: file("lower.json", "build-01", 6), uses: 7}
	solo := &spelledWorkspace{host: "solo", pushed: file("solo.json", "solo", 10), uses: 11}
	for _, w := range []*spelledWorkspace{upper, lower, solo, upper, lower, solo} {
		w.push(t, s, at)
	}
	if n := total(); n != 12+11 {
		t.Errorf("after the upgrade and two pushes of each: %d uses of pdf, want %d (5 + 7 of build-01, 11 of solo)", n, 12+11)
	}
	upper.uses, lower.uses, solo.uses = 8, 9, 12
	for _, w := range []*spelledWorkspace{lower, upper, solo} {
		w.push(t, s, at)
	}
	if n := total(); n != 17+12 {
		t.Errorf("after more uses: %d uses of pdf, want %d", n, 17+12)
	}
	// A heartbeat as a skillsync of version 3 writes it, to a host the
	// store holds: refused, so its counters cannot go round spelling_copies.
	conn := pgtest.Connect(t, c)
	_, err = conn.Exec(ctx, `INSERT INTO `+schema+`.hosts AS h (host, environment, version, skills, last_error, reported_at, clock_skew_ms, seq)
VALUES ('build-01', '', 'v3', 0, '', NULL, NULL, 1)
ON CONFLICT (host) DO UPDATE SET version = EXCLUDED.version, last_seen_at = now(), seq = h.seq + 1 RETURNING seq`)
	if err == nil || !strings.Contains(err.Error(), "pushed_by") {
		t.Errorf("a version 3 heartbeat after the upgrade: %v, want it refused", err)
	}
}
