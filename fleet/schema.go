package fleet

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/skillsync/skillsync/internal/pgschema"
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
`,
	// Version 2: fleet usage reads per-copy rollups, O(copies × days in
	// the window) rows, instead of aggregating every host's rows.
	//   - copy_stats: per copy, over every host: how many hosts hold a
	//     row of it, hold it not archived, pin it; its last use and view
	//     and first report anywhere.
	//   - copy_days: per copy and UTC day, the uses and views added that
	//     day (the growth of the hosts' counters), and last_users, how
	//     many hosts last used it that day, so that the hosts that used
	//     it since a day are a sum.
	//   - copy_deltas: changes not yet folded into the two: day is NULL
	//     for a change of copy_stats. Append-only and without an index;
	//     vacuumed after every 50,000 dead rows, as folds empty it.
	// Statement triggers on host_copies turn every write to it (a push,
	// an operator's fix, a host's rows deleted with it) into rows of
	// copy_deltas, from its transition tables, so that the rollups stay
	// exact. Every host pushes the same copies: were a push to update
	// the rollups' rows, concurrent pushes would queue on their row
	// locks. A push appends instead, and fold_rollups(), run by one push
	// in foldEvery (one at a time) and by Store.Fold, moves the deltas
	// into the rollups. Readers add the deltas not yet folded, in the
	// same statement (one snapshot: a fold is seen whole or not at all).
	//
	// A change that may lower a copy's last use or view or raise its
	// first report (never a push: a push only raises the times) folds
	// at once and reads those times again from host_copies.
	//
	// usage_days, per host, copy and day, is folded into copy_days and
	// dropped: nothing read it per host, and it was half the writes of
	// a push and half the database.
	//
	// Sums saturate (sat) rather than fail, so a hostile row cannot stop
	// every host's pushes; reads refuse sums over MaxCount.
	`
CREATE FUNCTION {S}.sat(numeric) RETURNS bigint LANGUAGE sql IMMUTABLE
	AS 'SELECT LEAST(GREATEST($1, -9223372036854775807), 9223372036854775807)::bigint';

CREATE TABLE {S}.copy_stats (
	layer text NOT NULL,
	owner text NOT NULL DEFAULT '',
	name text NOT NULL,
	hosts bigint NOT NULL DEFAULT 0,
	placed bigint NOT NULL DEFAULT 0,
	pinned bigint NOT NULL DEFAULT 0,
	last_used_at timestamptz,
	last_viewed_at timestamptz,
	first_seen_at timestamptz,
	PRIMARY KEY (layer, owner, name)
) WITH (fillfactor = 50);

CREATE TABLE {S}.copy_days (
	day date NOT NULL,
	layer text NOT NULL,
	owner text NOT NULL DEFAULT '',
	name text NOT NULL,
	uses bigint NOT NULL DEFAULT 0,
	views bigint NOT NULL DEFAULT 0,
	last_users bigint NOT NULL DEFAULT 0,
	PRIMARY KEY (day, layer, owner, name)
) WITH (fillfactor = 50);

CREATE TABLE {S}.copy_deltas (
	day date,
	layer text NOT NULL,
	owner text NOT NULL DEFAULT '',
	name text NOT NULL,
	uses bigint NOT NULL DEFAULT 0,
	views bigint NOT NULL DEFAULT 0,
	last_users bigint NOT NULL DEFAULT 0,
	hosts bigint NOT NULL DEFAULT 0,
	placed bigint NOT NULL DEFAULT 0,
	pinned bigint NOT NULL DEFAULT 0,
	last_used_at timestamptz,
	last_viewed_at timestamptz,
	first_seen_at timestamptz
) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 50000, autovacuum_vacuum_cost_delay = 0);

INSERT INTO {S}.copy_stats (layer, owner, name, hosts, placed, pinned, last_used_at, last_viewed_at, first_seen_at)
SELECT layer, owner, name, count(*), count(*) FILTER (WHERE state <> 'archived'), count(*) FILTER (WHERE pinned),
	max(last_used_at), max(last_viewed_at), min(first_seen_at)
FROM {S}.host_copies GROUP BY layer, owner, name;

INSERT INTO {S}.copy_days (day, layer, owner, name, uses, views, last_users)
SELECT day, layer, owner, name, {S}.sat(sum(uses)), {S}.sat(sum(views)), sum(last_users) FROM (
	SELECT day, layer, owner, name, uses::numeric AS uses, views::numeric AS views, 0 AS last_users FROM {S}.usage_days
	UNION ALL
	SELECT (last_used_at AT TIME ZONE 'UTC')::date, layer, owner, name, 0, 0, 1 FROM {S}.host_copies WHERE last_used_at IS NOT NULL
) u GROUP BY day, layer, owner, name;

DROP TABLE {S}.usage_days;

-- fold_rollups moves at most lim deltas (NULL: all) into the rollups
-- and returns how many it moved. Rows inserted after its snapshot stay
-- for the next fold.
CREATE FUNCTION {S}.fold_rollups(lim bigint) RETURNS bigint
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	n bigint;
BEGIN
	WITH moved AS (
		DELETE FROM {S}.copy_deltas WHERE ctid = ANY (ARRAY(SELECT ctid FROM {S}.copy_deltas LIMIT lim)) RETURNING *
	), days AS (
		INSERT INTO {S}.copy_days AS d (day, layer, owner, name, uses, views, last_users)
		SELECT day, layer, owner, name, {S}.sat(sum(uses)), {S}.sat(sum(views)), {S}.sat(sum(last_users))
		FROM moved WHERE day IS NOT NULL
		GROUP BY day, layer, owner, name
		ORDER BY day, layer, owner, name
		ON CONFLICT (day, layer, owner, name) DO UPDATE SET
			uses = {S}.sat(d.uses::numeric + EXCLUDED.uses), views = {S}.sat(d.views::numeric + EXCLUDED.views),
			last_users = {S}.sat(d.last_users::numeric + EXCLUDED.last_users)
		RETURNING 1
	), stats AS (
		INSERT INTO {S}.copy_stats AS s (layer, owner, name, hosts, placed, pinned, last_used_at, last_viewed_at, first_seen_at)
		SELECT layer, owner, name, {S}.sat(sum(hosts)), {S}.sat(sum(placed)), {S}.sat(sum(pinned)), max(last_used_at), max(last_viewed_at), min(first_seen_at)
		FROM moved WHERE day IS NULL
		GROUP BY layer, owner, name
		ORDER BY layer, owner, name
		ON CONFLICT (layer, owner, name) DO UPDATE SET
			hosts = {S}.sat(s.hosts::numeric + EXCLUDED.hosts), placed = {S}.sat(s.placed::numeric + EXCLUDED.placed),
			pinned = {S}.sat(s.pinned::numeric + EXCLUDED.pinned),
			last_used_at = GREATEST(s.last_used_at, EXCLUDED.last_used_at), last_viewed_at = GREATEST(s.last_viewed_at, EXCLUDED.last_viewed_at),
			first_seen_at = LEAST(s.first_seen_at, EXCLUDED.first_seen_at)
		RETURNING 1
	)
	SELECT count(*) INTO n FROM moved;
	RETURN n;
END
$$;

-- copies_changed turns a change of host_copies into deltas: olds are
-- the rows before, news the rows after (pairs share a key).
CREATE FUNCTION {S}.copies_changed(olds {S}.host_copies[], news {S}.host_copies[]) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
	INSERT INTO {S}.copy_deltas (day, layer, owner, name, uses, views, last_users)
	SELECT day, layer, owner, name, {S}.sat(sum(du)), {S}.sat(sum(dv)), sum(dl) FROM (
		SELECT (coalesce(n.last_used_at, now()) AT TIME ZONE 'UTC')::date AS day, n.layer, n.owner, n.name,
			n.uses::numeric - coalesce(o.uses, 0) AS du, 0::numeric AS dv, 0 AS dl
		FROM unnest(news) n LEFT JOIN unnest(olds) o USING (host, layer, owner, name)
		WHERE n.uses > coalesce(o.uses, 0)
		UNION ALL
		SELECT (coalesce(n.last_viewed_at, now()) AT TIME ZONE 'UTC')::date, n.layer, n.owner, n.name,
			0, n.views::numeric - coalesce(o.views, 0), 0
		FROM unnest(news) n LEFT JOIN unnest(olds) o USING (host, layer, owner, name)
		WHERE n.views > coalesce(o.views, 0)
		UNION ALL
		SELECT (last_used_at AT TIME ZONE 'UTC')::date, layer, owner, name, 0, 0, -1 FROM unnest(olds) WHERE last_used_at IS NOT NULL
		UNION ALL
		SELECT (last_used_at AT TIME ZONE 'UTC')::date, layer, owner, name, 0, 0, 1 FROM unnest(news) WHERE last_used_at IS NOT NULL
	) g GROUP BY day, layer, owner, name
	HAVING sum(du) <> 0 OR sum(dv) <> 0 OR sum(dl) <> 0;

	INSERT INTO {S}.copy_deltas (day, layer, owner, name, hosts, placed, pinned, last_used_at, last_viewed_at, first_seen_at)
	SELECT NULL, layer, owner, name, sum(sign), sum(sign * (state <> 'archived')::int), sum(sign * pinned::int),
		max(last_used_at) FILTER (WHERE sign > 0), max(last_viewed_at) FILTER (WHERE sign > 0), min(first_seen_at) FILTER (WHERE sign > 0)
	FROM (SELECT -1 AS sign, * FROM unnest(olds) UNION ALL SELECT 1, * FROM unnest(news)) r
	GROUP BY layer, owner, name;

	-- A row that held a copy's last use, last view or first report may
	-- have lowered or raised it, or be gone: fold, and read those
	-- copies' times again.
	IF EXISTS (SELECT 1 FROM unnest(olds) o LEFT JOIN unnest(news) n USING (host, layer, owner, name)
		WHERE n.host IS NULL OR n.first_seen_at > o.first_seen_at
			OR o.last_used_at IS NOT NULL AND (n.last_used_at IS NULL OR n.last_used_at < o.last_used_at)
			OR o.last_viewed_at IS NOT NULL AND (n.last_viewed_at IS NULL OR n.last_viewed_at < o.last_viewed_at)) THEN
		PERFORM {S}.fold_rollups(NULL);
		UPDATE {S}.copy_stats s SET last_used_at = m.lu, last_viewed_at = m.lv, first_seen_at = m.fs
		FROM (SELECT DISTINCT o.layer, o.owner, o.name FROM unnest(olds) o LEFT JOIN unnest(news) n USING (host, layer, owner, name)
			WHERE n.host IS NULL OR n.first_seen_at > o.first_seen_at
				OR o.last_used_at IS NOT NULL AND (n.last_used_at IS NULL OR n.last_used_at < o.last_used_at)
				OR o.last_viewed_at IS NOT NULL AND (n.last_viewed_at IS NULL OR n.last_viewed_at < o.last_viewed_at)) g,
			LATERAL (SELECT max(c.last_used_at) AS lu, max(c.last_viewed_at) AS lv, min(c.first_seen_at) AS fs FROM {S}.host_copies c
				WHERE lower(c.name) = lower(g.name) AND c.name = g.name AND c.layer = g.layer AND c.owner = g.owner) m
		WHERE s.layer = g.layer AND s.owner = g.owner AND s.name = g.name;
	END IF;
END
$$;

CREATE FUNCTION {S}.host_copies_inserted() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
	PERFORM {S}.copies_changed('{}', ARRAY(SELECT n::{S}.host_copies FROM new_rows n));
	RETURN NULL;
END
$$;
CREATE FUNCTION {S}.host_copies_updated() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
	PERFORM {S}.copies_changed(ARRAY(SELECT o::{S}.host_copies FROM old_rows o), ARRAY(SELECT n::{S}.host_copies FROM new_rows n));
	RETURN NULL;
END
$$;
CREATE FUNCTION {S}.host_copies_deleted() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
	PERFORM {S}.copies_changed(ARRAY(SELECT o::{S}.host_copies FROM old_rows o), '{}');
	RETURN NULL;
END
$$;
CREATE TRIGGER rollup_insert AFTER INSERT ON {S}.host_copies REFERENCING NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION {S}.host_copies_inserted();
CREATE TRIGGER rollup_update AFTER UPDATE ON {S}.host_copies REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION {S}.host_copies_updated();
CREATE TRIGGER rollup_delete AFTER DELETE ON {S}.host_copies REFERENCING OLD TABLE AS old_rows
	FOR EACH STATEMENT EXECUTE FUNCTION {S}.host_copies_deleted();
`,
	// Version 3: one host per id whatever its case or normalization, the
	// clock skew of each host, and a source told from a fork of its name.
	//   - hosts.clock_skew_ms: how far the host's clock ran from the
	//     server's at its last push (host less server; NULL: not measured).
	//     A push dates its uses by the server's clock (push.go).
	//   - host_sources.remote, revisions.remote: a key of where the source
	//     is (its URL and ref in the host's lock, hashed), so that a fork
	//     reporting the same source name makes no host behind.
	//   - times of host_copies ahead of the server's clock (a host whose
	//     clock ran ahead, less than MaxAhead) come back to now: only the
	//     times change, never a count.
	//   - the Go part (mergeHostVariants) gives every host row its
	//     canonical id (hostid.Canonical) and merges the rows of ids that
	//     differ only in case or normalization, adding their counters.
	//   - hosts_host_canonical: a canonical id has no ASCII capital. A
	//     push of a skillsync before this version that read the version
	//     before the migration and wrote after it would bring a merged
	//     spelling back and count its counters again: it is refused
	//     whole. (NOT VALID: a row no push could write stays.)
	`
ALTER TABLE {S}.hosts ADD COLUMN clock_skew_ms bigint;
ALTER TABLE {S}.host_sources ADD COLUMN remote text NOT NULL DEFAULT '';
ALTER TABLE {S}.revisions ADD COLUMN remote text NOT NULL DEFAULT '';
ALTER TABLE {S}.revisions DROP CONSTRAINT revisions_pkey, ADD PRIMARY KEY (source, remote, revision);
ALTER TABLE {S}.hosts ADD CONSTRAINT hosts_host_canonical CHECK (host !~ '[ABCDEFGHIJKLMNOPQRSTUVWXYZ]') NOT VALID;
UPDATE {S}.host_copies SET
	last_used_at = CASE WHEN last_used_at > now() AND last_used_at <= now() + interval '1 day' THEN now() ELSE last_used_at END,
	last_viewed_at = CASE WHEN last_viewed_at > now() AND last_viewed_at <= now() + interval '1 day' THEN now() ELSE last_viewed_at END
WHERE last_used_at > now() AND last_used_at <= now() + interval '1 day' OR last_viewed_at > now() AND last_viewed_at <= now() + interval '1 day';
`,
	// Version 4: the counters of each spelling of a host id apart, so
	// that two workspaces of one host under two spellings ("Build-01" and
	// "build-01", one host since version 3) add up rather than keep the
	// larger of their counters.
	//   - spelling_copies: per host, spelling (the id as the workspace
	//     spells it) and copy, the absolute counters that spelling pushed;
	//     they only grow. A push adds their growth to host_copies, which
	//     stays the host's counters (now the sum of its spellings') and
	//     whose triggers keep the rollups as before.
	//   - the rows of spelling '' (no id is empty) hold what host_copies
	//     held before this version, of no known spelling: the first push
	//     of a spelling takes its counters out of them (up to what they
	//     hold) as counted already, so a host's first push after the
	//     upgrade counts only what grew, and two workspaces' counters,
	//     whose larger alone the store kept, end counted in full.
	//   - hosts.pushed_by: the schema version of the skillsync whose push
	//     wrote the row (NOT NULL, no default). A push of a skillsync
	//     before this version, in flight at the upgrade, names none and is
	//     refused whole: it would raise host_copies without its spelling's
	//     counters, and the next push would count that growth again.
	`
CREATE TABLE {S}.spelling_copies (
	host text NOT NULL REFERENCES {S}.hosts (host) ON DELETE CASCADE,
	spelling text NOT NULL,
	layer text NOT NULL,
	owner text NOT NULL DEFAULT '',
	name text NOT NULL,
	uses bigint NOT NULL DEFAULT 0,
	views bigint NOT NULL DEFAULT 0,
	PRIMARY KEY (host, spelling, layer, owner, name)
) WITH (fillfactor = 70);
INSERT INTO {S}.spelling_copies (host, spelling, layer, owner, name, uses, views)
SELECT host, '', layer, owner, name, uses, views FROM {S}.host_copies WHERE uses > 0 OR views > 0;
ALTER TABLE {S}.hosts ADD COLUMN pushed_by integer NOT NULL DEFAULT 4 CONSTRAINT hosts_pushed_by CHECK (pushed_by >= 4);
ALTER TABLE {S}.hosts ALTER COLUMN pushed_by DROP DEFAULT;
`}

// rollupTriggers are the triggers of host_copies that keep the rollups
// (migration 2).
var rollupTriggers = []string{"rollup_insert", "rollup_update", "rollup_delete"}

// migrationLock is the first key of the advisory lock that serializes
// migrations of one schema across processes ("flee").
const migrationLock = 0x666c6565

func needsSchema(err error) bool { return pgschema.Missing(err) }

// Migrate creates the schema and applies the migrations it lacks, in one
// transaction under an advisory lock, so two hosts starting at once do not
// both create the tables. It refuses a schema newer than this skillsync.
func (s *Store) Migrate(ctx context.Context) error {
	s.migrateOnce.Lock()
	defer s.migrateOnce.Unlock()
	if s.migrated {
		return nil
	}
	var merged []string
	err := pgschema.Migrate(ctx, s.pool, pgschema.Spec{
		Name: s.cfg.Schema, Quoted: s.schema, Lock: migrationLock, Migrations: migrations,
		After: map[int]func(context.Context, pgx.Tx) error{3: func(ctx context.Context, tx pgx.Tx) (err error) {
			merged, err = mergeHostVariants(ctx, tx, s.schema)
			return err
		}},
		Expand: func(sql string) string { return strings.ReplaceAll(sql, "{S}", s.schema) },
		Newer: func(version int32) error {
			return fmt.Errorf("%w: schema %s is at version %d, newer than this skillsync knows (%d): upgrade skillsync", ErrSchemaVersion, s.cfg.Schema, version, len(migrations))
		},
	})
	if err != nil {
		return s.fail("create or migrate the schema", err)
	}
	for _, m := range merged {
		s.warn("fleet: %s", m)
	}
	s.migrated = true
	return nil
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
	// The rollup triggers that are there and enabled, in the same
	// statement: without them pushes still succeed, and their usage is
	// lost to every reader, silently.
	var triggers []string
	err := s.pool.QueryRow(ctx, `SELECT max(version), (SELECT coalesce(array_agg(tgname::text), '{}') FROM pg_catalog.pg_trigger
	WHERE tgrelid = to_regclass($1) AND tgname = ANY($2) AND tgenabled <> 'D') FROM `+s.schema+".schema_migrations",
		s.schema+".host_copies", rollupTriggers).Scan(&version, &triggers)
	if err != nil && !needsSchema(err) {
		return s.fail("read the schema version", err)
	}
	v := 0
	if version != nil {
		v = int(*version)
	}
	switch {
	case v == len(migrations) && len(triggers) < len(rollupTriggers):
		var missing []string
		for _, t := range rollupTriggers {
			if !slices.Contains(triggers, t) {
				missing = append(missing, t)
			}
		}
		return s.fail("check the schema", fmt.Errorf("%w: schema %s is at version %d but trigger %s on host_copies is missing or disabled (changed by hand?), so pushes would add to no rollup: ALTER TABLE %s.host_copies ENABLE TRIGGER ALL, or create the triggers again as migration %d of fleet/schema.go does",
			ErrSchemaVersion, s.cfg.Schema, v, strings.Join(missing, ", "), s.cfg.Schema, len(migrations)))
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
