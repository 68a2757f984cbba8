package pgtest

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
)

// templateFolder points TMPDIR, where templates are kept, at a new
// folder of the given mode for the test, and returns the server's
// programs' folder; without a server the test is skipped. Not
// t.TempDir: its folders are closed to others, and a server run as
// nobody (under root) must pass through.
func templateFolder(t *testing.T, prefix string, mode os.FileMode) string {
	t.Helper()
	tmp, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	if err := os.Chmod(tmp, mode); err != nil {
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
	return bin
}

// TestDamagedTemplateIsReplaced: a template whose data directory the
// server refuses (here: one file of initdb's, where a whole directory
// should be) still gives a working cluster, made by initdb, with the
// password it reports, and is removed so that the next cluster makes a
// new one. It sets TMPDIR, where templates are kept, so it runs alone.
func TestDamagedTemplateIsReplaced(t *testing.T) {
	probe := &Cluster{bin: templateFolder(t, "pgtest-templates-", 0o755)}
	var err error
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

// TestNoTemplateInAnOpenFolder: where other users can write the
// temporary folder (a shared /tmp), a template found there is not used,
// as one planted there could set commands the server runs, and none is
// made there. It sets TMPDIR, so it runs alone.
func TestNoTemplateInAnOpenFolder(t *testing.T) {
	c := &Cluster{bin: templateFolder(t, "pgtest-open-", 0o1777)}
	planted, err := c.templatePath()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(planted, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(planted, "password"), []byte("pw-planted\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if dir, _, err := c.template(context.Background()); err == nil {
		t.Fatalf("the template %s was used from a folder open to other users", dir)
	}
	tmp := os.Getenv("TMPDIR")
	entries, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if filepath.Join(tmp, e.Name()) != planted {
			t.Errorf("%s was made in the open folder", e.Name())
		}
	}
}

// TestScramVerifier compares scramVerifier with verifiers computed by
// another implementation (Python's hashlib and hmac). TestStopResume
// checks that a cluster's superuser has the cheap one.
func TestScramVerifier(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		password, salt string
		iterations     int
		want           string
	}{
		// The password, salt and iterations of RFC 7677's example.
		{"pencil", "W22ZaJ0SNY7soEsUEjb6gQ==", 4096, "SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=:wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU="},
		{"pw-0123", "MDEyMzQ1Njc4OWFiY2RlZg==", 1, "SCRAM-SHA-256$1:MDEyMzQ1Njc4OWFiY2RlZg==$x8ZYdAGd2Vbw7tFIhxSd64TUq05GMK3tHEvsitoT4Bk=:B8kvQAwAz9EmKpGEFVZj+rGphUzfQ3sn9a1GCXAPsig="},
	} {
		salt, err := base64.StdEncoding.DecodeString(tc.salt)
		if err != nil {
			t.Fatal(err)
		}
		got, err := scramVerifier(tc.password, salt, tc.iterations)
		if err != nil || got != tc.want {
			t.Errorf("scramVerifier(%q, %s, %d) = %s, %v; want %s", tc.password, tc.salt, tc.iterations, got, err, tc.want)
		}
	}
}
