package pgtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
)

// DSNFile writes the URL connecting to database as the superuser into a
// file of the test's own (0600, one line) and returns the file's path:
// what a config's dsn_file names, so the password stays out of the
// config.
func (c *Cluster) DSNFile(t testing.TB, database string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "dsn")
	if err := os.WriteFile(path, []byte(c.DSN(database)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Exec runs sql as the superuser on a connection of its own to the
// postgres database, failing the test on an error.
func Exec(t testing.TB, c *Cluster, sql string, args ...any) {
	t.Helper()
	ctx := context.Background()
	conn := connect(t, c)
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// QueryValue runs a query that returns one row of one column, as Exec
// runs SQL, and returns that value scanned into a T.
func QueryValue[T any](t testing.TB, c *Cluster, sql string, args ...any) T {
	t.Helper()
	ctx := context.Background()
	conn := connect(t, c)
	defer conn.Close(ctx)
	var v T
	if err := conn.QueryRow(ctx, sql, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

func connect(t testing.TB, c *Cluster) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), c.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

// Connect opens a connection of its own to the postgres database as the
// superuser, closed when the test ends.
func Connect(t testing.TB, c *Cluster) *pgx.Conn {
	t.Helper()
	conn := connect(t, c)
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// Begin begins a transaction on a connection of its own, as Connect opens
// it. What the test does not commit is rolled back when it ends.
func Begin(t testing.TB, c *Cluster) pgx.Tx {
	t.Helper()
	tx, err := Connect(t, c).Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(context.Background()) })
	return tx
}
