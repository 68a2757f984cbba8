package pgtest_test

import (
	"context"
	"errors"
	"strconv"
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
