package pgtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestDamagedTemplateIsReplaced: a template whose data directory the
// server refuses (here: one file of initdb's, where a whole directory
// should be) still gives a working cluster, made by initdb, with the
// password it reports, and is removed so that the next cluster makes a
// new one. It sets TMPDIR, where templates are kept, so it runs alone.
func TestDamagedTemplateIsReplaced(t *testing.T) {
	// Not t.TempDir: its folders are closed to others, and a server run
	// as nobody (under root) must pass through.
	tmp, err := os.MkdirTemp("", "pgtest-templates-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	if err := os.Chmod(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	bin, err := BinDir()
	if errors.Is(err, ErrNoServer) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	probe := &Cluster{bin: bin}
	if os.Geteuid() == 0 {
		if probe.cred, err = serverUser(); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := probe.templatePath()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "PG_VERSION"), []byte("not a version\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "password"), []byte("pw-template\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, err := Start(ctx)
	if err != nil {
		t.Fatalf("start with a damaged template: %v", err)
	}
	defer c.Remove()
	conn, err := pgx.Connect(ctx, c.DSN("postgres"))
	if err != nil {
		t.Fatalf("connect with the cluster's password: %v", err)
	}
	conn.Close(ctx)
	if c.Password() == "pw-template" {
		t.Error("the cluster kept the template's password")
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the damaged template is still there: %v", err)
	}
}
