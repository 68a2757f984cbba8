package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// migrations are the schema's versions in order: version N is
// migrations[N-1]. A migration is appended, never edited. {S} stands for
// the quoted schema.
//
// Version 1:
//   - hosts: one row per host, its last heartbeat (server time), what it
//     said of itself, and seq, the number of pushes it made. A push locks
//     its host's row first, so pushes of one host serialize.
//   - host_sources: per host and source, the revision it has and its last
//     sync result.
//   - revisions: when any host first reported a revision of a source;
//     the newest revision of a source is the one first reported last.
//   - host_copies: per host and copy (<layer>[:<owner>]/<name>), the
//     absolute counters and last times the host reported. Counters only
//     grow: a push that reports less changes nothing.
//   - usage_days: per host, copy and UTC day, the uses and views added
//     that day, from the growth of the counters.
//
// The two usage tables leave room in their pages (fillfactor 70) so that
// a push's updates, which change no indexed column, stay on the page
// (HOT) and write no index.
var migrations = []string{`
CREATE TABLE {S}.hosts (
	host text PRIMARY KEY,
	environment text NOT NULL DEFAULT '',
	version text NOT NULL DEFAULT '',
	skills integer NOT NULL DEFAULT 0,
	last_error text NOT NULL DEFAULT '',
	reported_at timestamptz,
	last_seen_at timestamptz NOT NULL DEFAULT now(),
	first_seen_at timestamptz NOT NULL DEFAULT now(),
	seq bigint NOT NULL DEFAULT 0
);

CREATE TABLE {S}.host_sources (
	host text NOT NULL REFERENCES {S}.hosts (host) ON DELETE CASCADE,
	source text NOT NULL,
	revision text NOT NULL DEFAULT '',
	status text NOT NULL DEFAULT '',
	error text NOT NULL DEFAULT '',
	synced_at timestamptz,
	PRIMARY KEY (host, source)
);

CREATE TABLE {S}.revisions (
	source text NOT NULL,
	revision text NOT NULL,
	first_seen_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	PRIMARY KEY (source, revision)
);

CREATE TABLE {S}.host_copies (
	host text NOT NULL REFERENCES {S}.hosts (host) ON DELETE CASCADE,
	layer text NOT NULL,
	owner text NOT NULL DEFAULT '',
	name text NOT NULL,
	uses bigint NOT NULL DEFAULT 0,
	views bigint NOT NULL DEFAULT 0,
	last_used_at timestamptz,
	last_viewed_at timestamptz,
	state text NOT NULL DEFAULT '',
	pinned boolean NOT NULL DEFAULT false,
	first_seen_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (host, layer, owner, name)
) WITH (fillfactor = 70);
CREATE INDEX host_copies_name ON {S}.host_copies (lower(name));

CREATE TABLE {S}.usage_days (
	host text NOT NULL,
	layer text NOT NULL,
	owner text NOT NULL DEFAULT '',
	name text NOT NULL,
	day date NOT NULL,
	uses bigint NOT NULL DEFAULT 0,
	views bigint NOT NULL DEFAULT 0,
	PRIMARY KEY (host, layer, owner, name, day)
) WITH (fillfactor = 70);
CREATE INDEX usage_days_day ON {S}.usage_days (day);
`}

// migrationLock is the first key of the advisory lock that serializes
// migrations of one schema across processes ("flee").
const migrationLock = 0x666c6565

func needsSchema(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "42P01" || pgErr.Code == "3F000")
}

// Migrate creates the schema and applies the migrations it lacks, in one
// transaction under an advisory lock, so two hosts starting at once do not
// both create the tables. It refuses a schema newer than this skillsync.
func (s *Store) Migrate(ctx context.Context) error {
	s.migrateOnce.Lock()
	defer s.migrateOnce.Unlock()
	if s.migrated {
		return nil
	}
	err := s.migrate(ctx)
	if err != nil {
		return s.fail("create or migrate the schema", err)
	}
	s.migrated = true
	return nil
}

func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1, hashtext($2))", migrationLock, s.cfg.Schema); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+s.schema+`;
CREATE TABLE IF NOT EXISTS `+s.schema+`.schema_migrations (
	version integer PRIMARY KEY,
	applied_at timestamptz NOT NULL DEFAULT now()
)`); err != nil {
		return err
	}
	var version int32
	if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM "+s.schema+".schema_migrations").Scan(&version); err != nil {
		return err
	}
	if int(version) > len(migrations) {
		return fmt.Errorf("%w: schema %s is at version %d, newer than this skillsync knows (%d): upgrade skillsync", ErrSchemaVersion, s.cfg.Schema, version, len(migrations))
	}
	for v := int(version) + 1; v <= len(migrations); v++ {
		if _, err := tx.Exec(ctx, strings.ReplaceAll(migrations[v-1], "{S}", s.schema)); err != nil {
			return fmt.Errorf("migration %d: %w", v, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO "+s.schema+".schema_migrations (version) VALUES ($1)", v); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// ready checks, once per Store, that the schema is at this skillsync's
// version, creating or migrating it when the config allows.
func (s *Store) ready(ctx context.Context) error {
	s.migrateOnce.Lock()
	done := s.migrated
	s.migrateOnce.Unlock()
	if done {
		return nil
	}
	var version *int32
	err := s.pool.QueryRow(ctx, "SELECT max(version) FROM "+s.schema+".schema_migrations").Scan(&version)
	if err != nil && !needsSchema(err) {
		return s.fail("read the schema version", err)
	}
	v := 0
	if version != nil {
		v = int(*version)
	}
	switch {
	case v == len(migrations):
		s.migrateOnce.Lock()
		s.migrated = true
		s.migrateOnce.Unlock()
		return nil
	case v > len(migrations):
		return s.fail("check the schema", fmt.Errorf("%w: schema %s is at version %d, newer than this skillsync knows (%d): upgrade skillsync", ErrSchemaVersion, s.cfg.Schema, v, len(migrations)))
	case !s.cfg.Create:
		return s.fail("check the schema", fmt.Errorf("%w: schema %s is at version %d, this skillsync needs version %d: set create: true in fleet: to create or migrate it", ErrSchemaVersion, s.cfg.Schema, v, len(migrations)))
	}
	return s.Migrate(ctx)
}
