package fleet_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/skillsync/skillsync/fleet"
	"github.com/skillsync/skillsync/internal/pgtest"
)

// TestUpgradeUnchangedCopyIsClaimedByItsSpelling: a version 3 store
// holds 6 uses of pdf that workspace Build-01 pushed (its pushed file,
// version 1, says so). After the upgrade Build-01 does not use pdf
// again, so its counter is unchanged; a second workspace of the host,
// spelled build-01, then uses pdf 3 times. The fleet must count 9: were
// Build-01's first push after the upgrade to leave out its unchanged
// copy, its 6 stayed in the rows of no spelling, and build-01's first
// push took its own 3 out of them as counted already, lost for good.
func TestUpgradeUnchangedCopyIsClaimedByItsSpelling(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	ctx := context.Background()
	schema := v3Schema(t, c)
	at := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	seedBuild01(t, c, schema, at)
	s, err := fleet.Open(ctx, fleet.Config{DSNFile: c.DSNFile(t, "postgres"), Schema: schema, Create: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dir := t.TempDir()
	rec := map[string]any{"u": 6, "v": 0, "lu": at.Unix(), "lv": time.Time{}.Unix(), "s": "active"}
	data, err := json.Marshal(map[string]any{"version": 1, "host": "build-01", "store": s.Identity(), "records": map[string]any{"marketplace:team/pdf": rec}})
	if err != nil {
		t.Fatal(err)
	}
	upperPath := filepath.Join(dir, "upper.json")
	if err := os.WriteFile(upperPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	upper := &spelledWorkspace{host: "Build-01", pushed: upperPath, uses: 6}
	lower := &spelledWorkspace{host: "build-01", pushed: filepath.Join(dir, "lower.json"), uses: 3}
	for _, w := range []*spelledWorkspace{upper, lower, upper, lower} {
		w.push(t, s, at)
	}
	if n := usageOf(t, s, fleet.UsageOptions{Since: at.Add(-time.Hour)})["marketplace:team/pdf"].Uses; n != 9 {
		t.Errorf("6 uses of Build-01 (unchanged since the upgrade) and 3 of build-01: the fleet counts %d, want 9", n)
	}
}

func seedBuild01(t *testing.T, c *pgtest.Cluster, schema string, at time.Time) {
	t.Helper()
	pgtest.Exec(t, c, "INSERT INTO "+schema+".hosts (host, seq) VALUES ('build-01', 3)")
	pgtest.Exec(t, c, `INSERT INTO `+schema+`.host_copies (host, layer, owner, name, uses, views, last_used_at, state) VALUES
	('build-01', 'marketplace', 'team', 'pdf', 6, 0, $1, 'active')`, at)
}

// TestMigration4FailsWhole: migration 4 stopped at its last step (a
// column pushed_by already there) leaves the version 3 schema as it was,
// no spelling_copies; once the cause is gone it runs, copying the
// host's counters once however often the store is opened.
func TestMigration4FailsWhole(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	ctx := context.Background()
	schema := v3Schema(t, c)
	at := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	seedBuild01(t, c, schema, at)
	pgtest.Exec(t, c, "ALTER TABLE "+schema+".hosts ADD COLUMN pushed_by text")
	cfg := fleet.Config{DSNFile: c.DSNFile(t, "postgres"), Schema: schema, Create: true, Timeout: 5 * time.Second}
	s, err := fleet.Open(ctx, cfg)
	if err == nil {
		err = s.Migrate(ctx)
		s.Close()
	}
	if err == nil {
		t.Fatal("migration 4 over a column pushed_by: done, want it refused")
	}
	if v := pgtest.QueryValue[int32](t, c, "SELECT max(version) FROM "+schema+".schema_migrations"); v != 3 {
		t.Fatalf("after a failed migration 4: version %d, want 3", v)
	}
	if n := pgtest.QueryValue[int64](t, c, "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = $1 AND tablename = 'spelling_copies'", schema); n != 0 {
		t.Fatal("after a failed migration 4: spelling_copies is there")
	}
	pgtest.Exec(t, c, "ALTER TABLE "+schema+".hosts DROP COLUMN pushed_by")
	for range 2 {
		s, err := fleet.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	if n := pgtest.QueryValue[int64](t, c, "SELECT sum(uses)::bigint FROM "+schema+".spelling_copies WHERE host = 'build-01' AND spelling = ''"); n != 6 {
		t.Fatalf("migrated twice: the host's counters of no spelling hold %d uses, want 6", n)
	}
}
