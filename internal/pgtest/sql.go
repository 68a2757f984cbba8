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

// Exec runs sql as the superuser on a connection to the postgres
// database that no other statement uses at the same time, failing the
// test on an error. The connection may be one an earlier Exec or
// QueryValue of the cluster used: sql must leave no state in the session
// (SET, LISTEN, a temporary table, a transaction left open); open a
// connection of the test's own (Connect, Begin) for those.
func Exec(t testing.TB, c *Cluster, sql string, args ...any) {
	t.Helper()
	ctx := context.Background()
	conn, gen := c.borrow(t)
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		conn.Close(ctx)
		t.Fatalf("%s: %v", sql, err)
	}
	c.giveBack(conn, gen)
}

// QueryValue runs a query that returns one row of one column, as Exec
// runs SQL, and returns that value scanned into a T.
func QueryValue[T any](t testing.TB, c *Cluster, sql string, args ...any) T {
	t.Helper()
	ctx := context.Background()
	conn, gen := c.borrow(t)
	var v T
	if err := conn.QueryRow(ctx, sql, args...).Scan(&v); err != nil {
		conn.Close(ctx)
		t.Fatalf("%s: %v", sql, err)
	}
	c.giveBack(conn, gen)
	return v
}

// maxIdle is how many connections a cluster keeps for Exec and
// QueryValue between their calls.
const maxIdle = 4

// borrow returns a connection for one Exec or QueryValue, and the
// cluster's generation it belongs to: one kept from an earlier call that
// still answers, or a new one. A connection is a backend process on the
// server, about 50 ms of CPU on the project's machine, where a statement
// on one already open costs a fraction of a millisecond.
func (c *Cluster) borrow(t testing.TB) (*pgx.Conn, uint64) {
	t.Helper()
	for {
		c.idleMu.Lock()
		gen := c.gen
		var conn *pgx.Conn
		if n := len(c.idle); n > 0 {
			conn, c.idle = c.idle[n-1], c.idle[:n-1]
		}
		c.idleMu.Unlock()
		if conn == nil {
			return connect(t, c), gen
		}
		if conn.Ping(context.Background()) == nil {
			return conn, gen
		}
		conn.Close(context.Background())
	}
}

// giveBack keeps conn for the next Exec or QueryValue when it is idle
// (no transaction open), the server has not been stopped since it was
// borrowed, and fewer than maxIdle are kept; it closes it otherwise.
func (c *Cluster) giveBack(conn *pgx.Conn, gen uint64) {
	c.idleMu.Lock()
	if gen == c.gen && len(c.idle) < maxIdle && conn.PgConn().TxStatus() == 'I' && !conn.IsClosed() {
		c.idle = append(c.idle, conn)
		conn = nil
	}
	c.idleMu.Unlock()
	if conn != nil {
		conn.Close(context.Background())
	}
}

// dropIdle closes the kept connections; the server is stopping.
func (c *Cluster) dropIdle() {
	c.idleMu.Lock()
	idle := c.idle
	c.idle = nil
	c.gen++
	c.idleMu.Unlock()
	for _, conn := range idle {
		conn.Close(context.Background())
	}
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
