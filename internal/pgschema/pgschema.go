// Package pgschema creates and migrates a PostgreSQL schema owned by one
// skillsync package (the postgres source, the fleet store): the schema,
// its schema_migrations table, and the migrations it lacks, applied in
// order in one transaction under an advisory lock, so that two processes
// starting at once do not both create the tables.
package pgschema

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Beginner starts a transaction: a *pgxpool.Pool or a *pgx.Conn.
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Spec describes one package's schema.
type Spec struct {
	// Name is the schema's plain identifier; Quoted the same, quoted for
	// SQL.
	Name, Quoted string
	// Lock is the first key of the advisory lock (the second is a hash of
	// Name): one per package.
	Lock int32
	// Migrations are the versions in order: version N is Migrations[N-1].
	// A migration is appended, never edited.
	Migrations []string
	// After holds, by version, the part of a migration SQL cannot spell
	// (a fold only Go makes the same way the program does): it runs after
	// that version's SQL, in the same transaction, so that the version is
	// applied whole or not at all. Like a migration's SQL it is appended,
	// never edited.
	After map[int]func(ctx context.Context, tx pgx.Tx) error
	// Expand puts the names into a migration's SQL.
	Expand func(string) string
	// Newer returns the error for a schema at a version newer than
	// len(Migrations): this program must not touch it.
	Newer func(version int32) error
}

// Migrate creates the schema and applies the migrations it lacks, in one
// transaction under the advisory lock. It refuses, with spec.Newer's
// error, a schema newer than it knows.
func Migrate(ctx context.Context, db Beginner, spec Spec) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1, hashtext($2))", spec.Lock, spec.Name); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+spec.Quoted+`;
CREATE TABLE IF NOT EXISTS `+spec.Quoted+`.schema_migrations (
	version integer PRIMARY KEY,
	applied_at timestamptz NOT NULL DEFAULT now()
)`); err != nil {
		return err
	}
	var version int32
	if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM "+spec.Quoted+".schema_migrations").Scan(&version); err != nil {
		return err
	}
	if int(version) > len(spec.Migrations) {
		return spec.Newer(version)
	}
	for v := int(version) + 1; v <= len(spec.Migrations); v++ {
		if _, err := tx.Exec(ctx, spec.Expand(spec.Migrations[v-1])); err != nil {
			return fmt.Errorf("migration %d: %w", v, err)
		}
		if after := spec.After[v]; after != nil {
			if err := after(ctx, tx); err != nil {
				return fmt.Errorf("migration %d: %w", v, err)
			}
		}
		if _, err := tx.Exec(ctx, "INSERT INTO "+spec.Quoted+".schema_migrations (version) VALUES ($1)", v); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// Missing reports whether err says a table or the schema does not exist:
// the schema was never created.
func Missing(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "42P01" || pgErr.Code == "3F000")
}

// Foreign reports whether err says a table of the schema is not the one
// skillsync makes: one of its name was there first (duplicate_table), or
// it lacks a column (undefined_column).
func Foreign(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "42P07" || pgErr.Code == "42703")
}
