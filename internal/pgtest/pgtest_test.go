package pgtest_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/skillsync/skillsync/internal/pgtest"
)

// TestStopResume starts a cluster, checks that it answers, that it stops
// answering when stopped and answers again, with its data, when resumed.
func TestStopResume(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, err := pgtest.Start(ctx)
	if err != nil {
		if errors.Is(err, pgtest.ErrNoServer) {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	defer c.Remove()
	if err := c.CreateDatabase(ctx, "kept"); err != nil {
		t.Fatal(err)
	}
	// The superuser's SCRAM verifier takes one PBKDF2 iteration, not
	// 4096, so that each connection costs its client no more CPU than it
	// must (pgtest's scramIterations).
	stored := pgtest.QueryValue[string](t, c, "SELECT rolpassword FROM pg_authid WHERE rolname = $1", pgtest.User)
	if !strings.HasPrefix(stored, "SCRAM-SHA-256$1:") {
		t.Errorf("the superuser's verifier is %.20s..., want SCRAM-SHA-256$1:...", stored)
	}
	if err := c.Kill(); err != nil {
		t.Fatal(err)
	}
	if conn, err := pgx.Connect(ctx, c.DSN("kept")); err == nil {
		conn.Close(ctx)
		t.Fatal("connected to a killed server")
	}
	if err := c.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, c.DSN("kept"))
	if err != nil {
		t.Fatalf("after resume: %v", err)
	}
	conn.Close(ctx)
	wrong := "postgres://postgres:nope@127.0.0.1:" + strconv.Itoa(c.Port()) + "/kept?sslmode=disable"
	if conn, err := pgx.Connect(ctx, wrong); err == nil {
		conn.Close(ctx)
		t.Fatal("a wrong password was accepted")
	}
}
