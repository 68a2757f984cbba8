package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/pgtest"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/repository/postgres"
)

// pgCluster is the PostgreSQL server of this test binary, started by the
// first test that needs it; TestMain removes it.
var pgCluster pgtest.Shared

// pgWorkspace is a workspace whose config has the postgres source team,
// in a schema of its own on cluster.
type pgWorkspace struct {
	dir     string
	cluster *pgtest.Cluster
	schema  string
	dsnFile string
}

// newPGWorkspace makes a workspace over a fresh schema named after the
// test (plus suffix), with extra appended to the repositories: list.
func newPGWorkspace(t *testing.T, c *pgtest.Cluster, suffix, extra string) *pgWorkspace {
	t.Helper()
	w := &pgWorkspace{dir: t.TempDir(), cluster: c, schema: pgtest.Name(t) + suffix}
	pgtest.Exec(t, c, "DROP SCHEMA IF EXISTS "+w.schema+" CASCADE")
	w.dsnFile = c.DSNFile(t, "postgres")
	w.writeConfig(t, "team", w.schema, extra, "")
	return w
}

// writeConfig writes the workspace's config with one postgres source.
func (w *pgWorkspace) writeConfig(t *testing.T, name, schema, extra, tail string) {
	t.Helper()
	cfg := "repositories:\n  - name: " + name + "\n    dsn_file: " + w.dsnFile + "\n    schema: " + schema + "\n    create: true\n    timeout: 20s\n" + extra + tail
	if err := os.WriteFile(filepath.Join(w.dir, "skillsync.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
}

// source opens the workspace's postgres source as another writer would.
func (w *pgWorkspace) source(t *testing.T) *postgres.Postgres {
	t.Helper()
	p, err := postgres.NewPostgres(postgres.PostgresConfig{Source: "team", DSNFile: w.dsnFile, Schema: w.schema, Create: true, SpoolDir: t.TempDir()}, repository.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// publish publishes dir to source with the CLI and returns the revision.
func publish(t *testing.T, ws, dir, source string) string {
	t.Helper()
	r := run(t, ws, "publish", dir, "--to", source, "--json")
	if r.code != 0 {
		t.Fatalf("publish %s: exit %d: %s%s", dir, r.code, r.stdout, r.stderr)
	}
	return decode[struct{ Revision string }](t, r).Revision
}

// cached reads a file of the cache, "" when it is not there.
func cached(ws, source, rel string) string {
	data, err := os.ReadFile(filepath.Join(ws, ".skills-cache", source, filepath.FromSlash(rel)))
	if err != nil {
		return ""
	}
	return string(data)
}

// lockedRevision is the revision skillsync.lock records for source.
func lockedRevision(t *testing.T, ws, source string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ws, "skillsync.lock"))
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		Sources map[string]struct{ Revision string }
	}
	if err := json.Unmarshal(data, &l); err != nil {
		t.Fatal(err)
	}
	return l.Sources[source].Revision
}

// TestPostgresSyncLifecycle: a first sync, an update, a deletion, each
// seen in the cache, the lock recording the revision and verify clean.
func TestPostgresSyncLifecycle(t *testing.T) {
	t.Parallel()
	w := newPGWorkspace(t, pgCluster.Get(t), "", "")
	rev := publish(t, w.dir, skilltest.Skill(t, t.TempDir(), "pdf", "Read PDF files.", map[string]string{"scripts/run.sh": "#!/bin/sh\necho one\n"}), "team")

	if r := run(t, w.dir, "sync"); r.code != 0 {
		t.Fatalf("first sync: exit %d: %s", r.code, r.stderr)
	}
	if got := cached(w.dir, "team", "pdf/scripts/run.sh"); got != "#!/bin/sh\necho one\n" {
		t.Errorf("first sync: run.sh = %q", got)
	}
	if info, err := os.Stat(filepath.Join(w.dir, ".skills-cache", "team", "pdf", "scripts", "run.sh")); err != nil || info.Mode().Perm()&0o111 == 0 {
		t.Errorf("the executable bit did not survive: %v %v", info, err)
	}
	if got := lockedRevision(t, w.dir, "team"); got != rev {
		t.Errorf("the lock records revision %q, publish said %q", got, rev)
	}
	if r := run(t, w.dir, "verify"); r.code != 0 {
		t.Errorf("verify after the first sync: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}

	rev2 := publish(t, w.dir, skilltest.Skill(t, t.TempDir(), "pdf", "Read PDF files.", map[string]string{"scripts/run.sh": "#!/bin/sh\necho two\n"}), "team")
	publish(t, w.dir, skilltest.Skill(t, t.TempDir(), "docx", "Write Word files.", nil), "team")
	if r := run(t, w.dir, "sync", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"team/pdf"`) {
		t.Fatalf("update: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if got := cached(w.dir, "team", "pdf/scripts/run.sh"); got != "#!/bin/sh\necho two\n" {
		t.Errorf("update: run.sh = %q", got)
	}
	if cached(w.dir, "team", "docx/SKILL.md") == "" {
		t.Error("update: the new skill docx is not in the cache")
	}
	if got := lockedRevision(t, w.dir, "team"); got == rev || got == rev2 {
		t.Errorf("the lock kept revision %q after two more publishes", got)
	}

	if _, err := w.source(t).Delete(context.Background(), "pdf", "test"); err != nil {
		t.Fatal(err)
	}
	if r := run(t, w.dir, "sync"); r.code != 0 {
		t.Fatalf("sync after a deletion: exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(w.dir, ".skills-cache", "team", "pdf")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the deleted skill is still in the cache: %v", err)
	}
	if cached(w.dir, "team", "docx/SKILL.md") == "" {
		t.Error("deleting pdf took docx too")
	}
	if r := run(t, w.dir, "verify"); r.code != 0 {
		t.Errorf("verify after the deletion: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
}

// TestPostgresSyncFrozen: the lock records the postgres revision and the
// skills' hashes; sync --frozen passes while they hold and refuses a
// skill changed in the database, keeping the cached one.
func TestPostgresSyncFrozen(t *testing.T) {
	t.Parallel()
	w := newPGWorkspace(t, pgCluster.Get(t), "", "")
	rev := publish(t, w.dir, skilltest.Skill(t, t.TempDir(), "pdf", "Read PDF files.", nil), "team")
	if r := run(t, w.dir, "sync"); r.code != 0 {
		t.Fatalf("sync: exit %d: %s", r.code, r.stderr)
	}
	if got := lockedRevision(t, w.dir, "team"); got != rev {
		t.Fatalf("the lock records revision %q, want %q", got, rev)
	}
	if r := run(t, w.dir, "sync", "--frozen"); r.code != 0 {
		t.Fatalf("sync --frozen with nothing changed: exit %d: %s", r.code, r.stderr)
	}
	before := cached(w.dir, "team", "pdf/SKILL.md")
	publish(t, w.dir, skilltest.Skill(t, t.TempDir(), "pdf", "Read PDF files, changed.", nil), "team")
	r := run(t, w.dir, "sync", "--frozen")
	if r.code != 1 || !strings.Contains(r.stderr, "~ skill team/pdf") {
		t.Errorf("sync --frozen over a changed skill: exit %d, want 1 naming team/pdf: %s", r.code, r.stderr)
	}
	if got := cached(w.dir, "team", "pdf/SKILL.md"); got != before {
		t.Errorf("sync --frozen wrote the changed skill:\n%s", got)
	}
	if got := lockedRevision(t, w.dir, "team"); got != rev {
		t.Errorf("a refused sync --frozen moved the lock to %q", got)
	}
}

// TestPostgresServerGoesAway: with the server stopped before a sync, or
// killed while a sync reads its snapshot, the postgres source keeps its
// last good files and the other source syncs: exit 3.
func TestPostgresServerGoesAway(t *testing.T) {
	// A PostgreSQL cluster of its own: pgtest starts the process's
	// clusters one at a time, so the test runs beside the others.
	t.Parallel()
	ctx := context.Background()
	// A cluster of its own: stopping the shared one would break the
	// tests that run beside this one.
	c := pgtest.Own(t)
	local := t.TempDir()
	w := newPGWorkspace(t, c, "", "  - name: local\n    dir: "+local+"\n")
	publish(t, w.dir, skilltest.Skill(t, t.TempDir(), "pdf", "Version one.", nil), "team")
	if r := run(t, w.dir, "sync"); r.code != 0 {
		t.Fatalf("sync: exit %d: %s", r.code, r.stderr)
	}
	good := cached(w.dir, "team", "pdf/SKILL.md")
	addLocal := func(name string) {
		src := skilltest.Skill(t, t.TempDir(), name, "A local skill.", nil)
		if err := os.Rename(src, filepath.Join(local, name)); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("before", func(t *testing.T) {
		publish(t, w.dir, skilltest.Skill(t, t.TempDir(), "pdf", "Version two.", nil), "team")
		if err := c.Stop(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := c.Resume(ctx); err != nil {
				t.Fatal(err)
			}
		}()
		addLocal("first")
		r := run(t, w.dir, "sync", "--json")
		if r.code != 3 {
			t.Fatalf("sync with the server down: exit %d, want 3: %s%s", r.code, r.stdout, r.stderr)
		}
		if got := cached(w.dir, "team", "pdf/SKILL.md"); got != good {
			t.Errorf("the last good files were not kept:\n%s", got)
		}
		if cached(w.dir, "local", "first/SKILL.md") == "" {
			t.Error("the other source was not synced")
		}
	})

	t.Run("mid-sync", func(t *testing.T) {
		// The port may have changed with the restart.
		if err := os.WriteFile(w.dsnFile, []byte(c.DSN("postgres")), 0o600); err != nil {
			t.Fatal(err)
		}
		// Hold the files table so that the sync's snapshot waits on it,
		// then kill the server under the waiting sync.
		tx := pgtest.Begin(t, c)
		if _, err := tx.Exec(ctx, "LOCK TABLE "+w.schema+".files IN ACCESS EXCLUSIVE MODE"); err != nil {
			t.Fatal(err)
		}
		addLocal("second")
		cmd := exec.Command(binary(t), "sync")
		cmd.Dir, cmd.Env = w.dir, environ(t, nil)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		// Another connection watches: inside the transaction the activity
		// view would be read once and never change.
		watch := pgtest.Connect(t, c)
		deadline := time.Now().Add(time.Minute)
		for {
			var waiting int
			err := watch.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'skillsync' AND wait_event_type = 'Lock'").Scan(&waiting)
			if err != nil {
				t.Fatal(err)
			}
			if waiting > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the sync never waited on the snapshot; stderr: %s", stderr.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err := c.Kill(); err != nil {
			t.Fatal(err)
		}
		err := <-done
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 3 {
			t.Fatalf("sync with the server killed mid-snapshot: %v, want exit 3: %s", err, stderr.String())
		}
		if !strings.Contains(stderr.String(), "team") {
			t.Errorf("the failed source is not named: %s", stderr.String())
		}
		if got := cached(w.dir, "team", "pdf/SKILL.md"); got != good {
			t.Errorf("the last good files were not kept:\n%s", got)
		}
		if cached(w.dir, "local", "second/SKILL.md") == "" {
			t.Error("the other source was not synced")
		}
		if r := run(t, w.dir, "verify"); r.code != 0 {
			t.Errorf("verify after the failed sync: exit %d: %s%s", r.code, r.stdout, r.stderr)
		}
	})
}

// TestPostgresWrongPassword: a wrong password fails clearly, and neither
// the connection string nor the password reaches the output, the JSON,
// the lock or the cache.
func TestPostgresWrongPassword(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	w := newPGWorkspace(t, c, "", "")
	bad := strings.Replace(c.DSN("postgres"), c.Password(), "wrong-secret-7f3a", 1)
	cfg := "repositories:\n  - name: team\n    postgres: TEAM_DSN\n    schema: " + w.schema + "\n    create: true\n"
	if err := os.WriteFile(filepath.Join(w.dir, "skillsync.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"TEAM_DSN=" + bad}
	dir := skilltest.Skill(t, t.TempDir(), "pdf", "Read PDF files.", nil)
	var outputs []result
	for _, args := range [][]string{
		{"publish", dir, "--to", "team"},
		{"publish", dir, "--to", "team", "--json"},
		{"sync"},
		{"sync", "--json"},
	} {
		r := runEnv(t, w.dir, env, args...)
		if r.code != 1 {
			t.Errorf("%v: exit %d, want 1: %s%s", args, r.code, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stdout+r.stderr, "password authentication failed") {
			t.Errorf("%v does not say the password was refused: %s%s", args, r.stdout, r.stderr)
		}
		outputs = append(outputs, r)
	}
	for _, r := range outputs {
		for _, secret := range []string{"wrong-secret-7f3a", bad, c.Password()} {
			if strings.Contains(r.stdout+r.stderr, secret) {
				t.Errorf("a secret reached the output:\n%s%s", r.stdout, r.stderr)
			}
		}
	}
	err := filepath.WalkDir(w.dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err == nil && bytes.Contains(data, []byte("wrong-secret-7f3a")) {
			t.Errorf("%s holds the password", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
