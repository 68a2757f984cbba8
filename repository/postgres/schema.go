package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skillsync/skillsync/internal/pgschema"
)

// postgresMigrations are the schema's versions in order: version N is
// migrations[N-1]. A migration is appended, never edited. In the SQL, {S}
// stands for the quoted schema and {channel} for the notification channel.
//
// Version 1:
//   - revision: one row holding the source's revision, a counter, and a
//     random id of the registry. Any change to skills or files bumps the
//     counter once per transaction, from triggers, so a writer that knows
//     nothing of skillsync (psql, another tool) still moves the revision,
//     and NOTIFYs the channel with the new revision when it commits. A
//     sequence would not do: nextval is not transactional, so a reader
//     could see revision 6 while the transaction that took 5 has not
//     committed yet, and miss it for good. The counter's row lock is held
//     to the commit, which makes the revision order the commit order.
//   - skills: one row per top-level entry of the source, keyed by name,
//     with the skill's content hash (the cache's hash) as its last
//     publisher computed it, and the revision, time and author of its last
//     change.
//   - files: a skill's files by path relative to its directory, with mode
//     and content; size and SHA-256 are computed by the database from the
//     content, so no writer can make them disagree. Content is stored
//     uncompressed out of line so that a slice of it is read without
//     decompressing what precedes it.
//   - changes: who changed which skill when, one row per publish or delete.
var postgresMigrations = []string{`
CREATE TABLE {S}.revision (
	singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
	registry uuid NOT NULL DEFAULT gen_random_uuid(),
	value bigint NOT NULL DEFAULT 0,
	xact xid8
);
INSERT INTO {S}.revision DEFAULT VALUES;

CREATE TABLE {S}.skills (
	name text PRIMARY KEY,
	hash text NOT NULL DEFAULT '',
	revision bigint NOT NULL DEFAULT 0,
	updated_at timestamptz NOT NULL DEFAULT now(),
	updated_by text NOT NULL DEFAULT ''
);

CREATE TABLE {S}.files (
	skill text NOT NULL REFERENCES {S}.skills (name) ON DELETE CASCADE ON UPDATE CASCADE,
	path text NOT NULL,
	mode integer NOT NULL DEFAULT 420,
	content bytea NOT NULL,
	size bigint GENERATED ALWAYS AS (octet_length(content)) STORED,
	sha256 bytea GENERATED ALWAYS AS (sha256(content)) STORED,
	PRIMARY KEY (skill, path)
);
ALTER TABLE {S}.files ALTER COLUMN content SET STORAGE EXTERNAL;

CREATE TABLE {S}.changes (
	id bigserial PRIMARY KEY,
	revision bigint NOT NULL,
	skill text NOT NULL,
	action text NOT NULL CHECK (action IN ('publish', 'delete')),
	hash text NOT NULL DEFAULT '',
	author text NOT NULL DEFAULT '',
	db_user text NOT NULL DEFAULT current_user,
	at timestamptz NOT NULL DEFAULT now()
);

-- bump moves the revision on once per transaction, notifies the channel
-- with the new revision (delivered at commit), and returns the revision.
CREATE FUNCTION {S}.bump() RETURNS bigint LANGUAGE plpgsql SET search_path = pg_catalog AS $$
DECLARE
	v bigint;
	r text;
BEGIN
	UPDATE {S}.revision SET value = value + 1, xact = pg_current_xact_id()
	WHERE xact IS DISTINCT FROM pg_current_xact_id()
	RETURNING value, registry::text INTO v, r;
	IF FOUND THEN
		PERFORM pg_notify('{channel}', v::text || '-' || left(replace(r, '-', ''), 12));
	ELSE
		SELECT value INTO v FROM {S}.revision;
	END IF;
	RETURN v;
END
$$;

CREATE FUNCTION {S}.bump_trigger() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN
	PERFORM {S}.bump();
	RETURN NULL;
END
$$;

CREATE TRIGGER bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {S}.skills
	FOR EACH STATEMENT EXECUTE FUNCTION {S}.bump_trigger();
CREATE TRIGGER bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {S}.files
	FOR EACH STATEMENT EXECUTE FUNCTION {S}.bump_trigger();
`}

// withSchema runs op and, when it failed for want of the tables (missing,
// or older than this skillsync) and the config allows creating them,
// creates or migrates them and runs op once more. So create: true costs
// nothing while the tables are current: Sync stays one query.
func (p *Postgres) withSchema(ctx context.Context, pool *pgxpool.Pool, op func() error) error {
	err := op()
	if err == nil || !p.cfg.Create || !needsSchema(err) {
		return err
	}
	if err := p.migrate(ctx, pool); err != nil {
		return fmt.Errorf("create or migrate the schema: %w", err)
	}
	return op()
}

// needsSchema reports whether err says the tables are missing or older.
func needsSchema(err error) bool {
	var old *schemaOldError
	return errors.As(err, &old) || pgschema.Missing(err)
}

// schemaOldError is a schema older than this skillsync: an
// ErrSchemaVersion that create: true resolves.
type schemaOldError struct{ msg string }

func (e *schemaOldError) Error() string        { return e.msg }
func (e *schemaOldError) Is(target error) bool { return target == ErrSchemaVersion }

// migrationLock is the first key of the advisory lock that serializes
// migrations of one schema across processes ("skls").
const migrationLock = 0x736b6c73

// migrate creates the schema and applies the migrations it lacks, in one
// transaction under an advisory lock, so two processes starting at once do
// not both create the tables.
func (p *Postgres) migrate(ctx context.Context, pool *pgxpool.Pool) error {
	return pgschema.Migrate(ctx, pool, pgschema.Spec{
		Name: p.cfg.Schema, Quoted: p.schema, Lock: migrationLock, Migrations: postgresMigrations,
		Expand: p.expand, Newer: p.checkNewer,
	})
}

// expand puts the schema and channel names into a migration. Both are
// plain identifiers (NewPostgres checks), safe in SQL and in a string
// literal alike.
func (p *Postgres) expand(sql string) string {
	return strings.NewReplacer("{S}", p.schema, "{channel}", p.cfg.Schema).Replace(sql)
}

// checkVersion accepts the schema version a query read: the one this
// skillsync knows, no other. nil means the migrations table is empty.
func (p *Postgres) checkVersion(version *int32) error {
	v := int32(0)
	if version != nil {
		v = *version
	}
	if err := p.checkNewer(v); err != nil {
		return err
	}
	if int(v) < len(postgresMigrations) {
		return &schemaOldError{fmt.Sprintf("%v: schema %s is at version %d, this skillsync needs version %d: set create: true on the source to migrate it",
			ErrSchemaVersion, p.cfg.Schema, v, len(postgresMigrations))}
	}
	return nil
}

func (p *Postgres) checkNewer(v int32) error {
	if int(v) > len(postgresMigrations) {
		return fmt.Errorf("%w: schema %s is at version %d, newer than this skillsync knows (%d): upgrade skillsync",
			ErrSchemaVersion, p.cfg.Schema, v, len(postgresMigrations))
	}
	return nil
}
