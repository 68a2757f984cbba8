package pgschema_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skillsync/skillsync/internal/pgschema"
	"github.com/skillsync/skillsync/internal/pgtest"
)

var errNewer = errors.New("newer")

func spec(migrations ...string) pgschema.Spec {
	return pgschema.Spec{Name: "ps", Quoted: `"ps"`, Lock: 0x74657374, Migrations: migrations,
		Expand: func(sql string) string { return strings.ReplaceAll(sql, "{S}", `"ps"`) },
		Newer:  func(int32) error { return errNewer }}
}

// Migrations apply in order and once, even from processes starting at
// once; a later skillsync appends one; an older one refuses the result.
func TestMigrate(t *testing.T) {
	c := pgtest.Own(t)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, c.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, "SELECT 1 FROM ps.t"); !pgschema.Missing(err) {
		t.Fatalf("a missing schema: %v", err)
	}
	v1 := "CREATE TABLE {S}.t (n integer); INSERT INTO {S}.t VALUES (1)"
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- pgschema.Migrate(ctx, pool, spec(v1))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := pgschema.Migrate(ctx, pool, spec(v1, "INSERT INTO {S}.t VALUES (2)")); err != nil {
		t.Fatal(err)
	}
	var sum, version int
	if err := pool.QueryRow(ctx, "SELECT (SELECT sum(n) FROM ps.t), (SELECT max(version) FROM ps.schema_migrations)").Scan(&sum, &version); err != nil {
		t.Fatal(err)
	}
	if sum != 3 || version != 2 {
		t.Fatalf("after four version 1 migrations and one to version 2: rows sum to %d, version %d", sum, version)
	}
	if err := pgschema.Migrate(ctx, pool, spec(v1)); !errors.Is(err, errNewer) {
		t.Fatalf("version 1 on a version 2 schema: %v", err)
	}
	// A failing migration leaves nothing behind.
	if err := pgschema.Migrate(ctx, pool, spec(v1, "INSERT INTO {S}.t VALUES (2)", "INSERT INTO {S}.t VALUES (4); SELECT 1/0")); err == nil || !strings.Contains(err.Error(), "migration 3") {
		t.Fatalf("a failing migration: %v", err)
	}
	if err := pool.QueryRow(ctx, "SELECT (SELECT sum(n) FROM ps.t), (SELECT max(version) FROM ps.schema_migrations)").Scan(&sum, &version); err != nil || sum != 3 || version != 2 {
		t.Fatalf("after a failed migration: sum %d version %d %v", sum, version, err)
	}
}

// A migration's Go part runs after its SQL in the same transaction: a
// failing one undoes that SQL too, and one that succeeds runs once.
func TestMigrateAfter(t *testing.T) {
	c := pgtest.Own(t)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, c.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	v1, v2 := "CREATE TABLE {S}.t (n integer)", "INSERT INTO {S}.t VALUES (1)"
	failing := spec(v1, v2)
	failing.After = map[int]func(context.Context, pgx.Tx) error{2: func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO ps.t VALUES (10)"); err != nil {
			return err
		}
		return errors.New("no")
	}}
	if err := pgschema.Migrate(ctx, pool, failing); err == nil || !strings.Contains(err.Error(), "migration 2: no") {
		t.Fatalf("a failing Go part: %v", err)
	}
	runs := 0
	ok := spec(v1, v2)
	ok.After = map[int]func(context.Context, pgx.Tx) error{2: func(ctx context.Context, tx pgx.Tx) error {
		runs++
		// It sees its version's SQL.
		_, err := tx.Exec(ctx, "UPDATE ps.t SET n = n + 100")
		return err
	}}
	for range 2 {
		if err := pgschema.Migrate(ctx, pool, ok); err != nil {
			t.Fatal(err)
		}
	}
	var sum, version int
	if err := pool.QueryRow(ctx, "SELECT (SELECT sum(n) FROM ps.t), (SELECT max(version) FROM ps.schema_migrations)").Scan(&sum, &version); err != nil {
		t.Fatal(err)
	}
	if sum != 101 || version != 2 || runs != 1 {
		t.Fatalf("after a failed Go part and a good one twice: rows sum to %d, version %d, runs %d; want 101, 2, 1", sum, version, runs)
	}
}
