package fleet

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/skillsync/skillsync/internal/hostid"
)

// mergeHostVariants is the Go part of migration 3, in its transaction:
// every host row of schema (quoted) gets its canonical id
// (hostid.Canonical), and the rows of ids one canonical id covers
// ("Build-01" and "build-01", "café" in NFC and NFD) become one host. It
// returns what it merged, a line a host, for a warning.
//
// What a merge of two hosts' usage rows means follows from how pushes
// count: a host's row holds the absolute counters it pushed, and the day
// buckets already hold their growth. The ids one workspace pushed under
// (its id's spelling changed: fleet.host edited, the host name's case)
// hold what the workspace counted under each, and its pushed file keeps
// them apart (earlier), so the merged row holds their sum, which is what
// the workspace's next push sends once it folds those ids together too
// (PreparePush). The day buckets are left as they are: no use is counted
// again or lost. So the merged row's counters are the sum of the rows',
// its last use and view the latest, its first report the earliest, a pin
// any row's, its state the last written; the host's heartbeat and
// sources are those of the id seen last, and its push count the sum.
func mergeHostVariants(ctx context.Context, tx pgx.Tx, schema string) ([]string, error) {
	rows, err := tx.Query(ctx, "SELECT host FROM "+schema+".hosts")
	if err != nil {
		return nil, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	groups := map[string][]string{}
	for _, id := range ids {
		// A row no push could have written stays as it is: readers skip
		// it with a warning.
		if c := hostid.Canonical(id); ValidHostID(id) && ValidHostID(c) {
			groups[c] = append(groups[c], id)
		}
	}
	var olds, news, notes []string
	for _, c := range slices.Sorted(maps.Keys(groups)) {
		g := groups[c]
		if len(g) == 1 && g[0] == c {
			continue
		}
		slices.Sort(g)
		for _, id := range g {
			olds, news = append(olds, id), append(news, c)
		}
		if len(g) == 1 {
			notes = append(notes, fmt.Sprintf("host id %q is now %q, its canonical form (lower case, NFC)", g[0], c))
			continue
		}
		quoted := make([]string, len(g))
		for i, id := range g {
			quoted[i] = strconv.Quote(id)
		}
		notes = append(notes, fmt.Sprintf("host ids %s differ only in case or Unicode normalization: merged into one host, %q, their usage counters added",
			strings.Join(quoted, ", "), c))
	}
	if len(olds) == 0 {
		return nil, nil
	}
	S := schema
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`CREATE TEMP TABLE fleet_host_map (old text PRIMARY KEY, new text NOT NULL) ON COMMIT DROP`, nil},
		{`INSERT INTO fleet_host_map SELECT * FROM unnest($1::text[], $2::text[])`, []any{olds, news}},
		{`CREATE TEMP TABLE fleet_merged_hosts ON COMMIT DROP AS
SELECT m.new AS host,
	(array_agg(h.host ORDER BY h.last_seen_at DESC, h.host))[1] AS latest,
	(array_agg(h.environment ORDER BY h.last_seen_at DESC, h.host))[1] AS environment,
	(array_agg(h.version ORDER BY h.last_seen_at DESC, h.host))[1] AS version,
	(array_agg(h.skills ORDER BY h.last_seen_at DESC, h.host))[1] AS skills,
	(array_agg(h.last_error ORDER BY h.last_seen_at DESC, h.host))[1] AS last_error,
	(array_agg(h.reported_at ORDER BY h.last_seen_at DESC, h.host))[1] AS reported_at,
	(array_agg(h.clock_skew_ms ORDER BY h.last_seen_at DESC, h.host))[1] AS clock_skew_ms,
	max(h.last_seen_at) AS last_seen_at, min(h.first_seen_at) AS first_seen_at, ` + S + `.sat(sum(h.seq)) AS seq
FROM ` + S + `.hosts h JOIN fleet_host_map m ON m.old = h.host GROUP BY m.new`, nil},
		{`CREATE TEMP TABLE fleet_merged_sources ON COMMIT DROP AS
SELECT mh.host, hs.source, hs.revision, hs.status, hs.error, hs.synced_at, hs.remote
FROM ` + S + `.host_sources hs JOIN fleet_merged_hosts mh ON mh.latest = hs.host`, nil},
		{`CREATE TEMP TABLE fleet_merged_copies ON COMMIT DROP AS
SELECT m.new AS host, c.layer, c.owner, c.name,
	LEAST(sum(c.uses), $1)::bigint AS uses, LEAST(sum(c.views), $1)::bigint AS views,
	max(c.last_used_at) AS last_used_at, max(c.last_viewed_at) AS last_viewed_at,
	(array_agg(c.state ORDER BY c.updated_at DESC, c.host))[1] AS state, bool_or(c.pinned) AS pinned,
	min(c.first_seen_at) AS first_seen_at, max(c.updated_at) AS updated_at
FROM ` + S + `.host_copies c JOIN fleet_host_map m ON m.old = c.host GROUP BY m.new, c.layer, c.owner, c.name`, []any{int64(MaxCount)}},
		// The rows go, and their merge comes in: host_copies' triggers
		// take the old rows' hosts, last users and times out of the
		// rollups and put the merged ones' in.
		{`DELETE FROM ` + S + `.host_copies WHERE host IN (SELECT old FROM fleet_host_map)`, nil},
		{`DELETE FROM ` + S + `.host_sources WHERE host IN (SELECT old FROM fleet_host_map)`, nil},
		{`DELETE FROM ` + S + `.hosts WHERE host IN (SELECT old FROM fleet_host_map)`, nil},
		{`INSERT INTO ` + S + `.hosts (host, environment, version, skills, last_error, reported_at, last_seen_at, first_seen_at, seq, clock_skew_ms)
SELECT host, environment, version, skills, last_error, reported_at, last_seen_at, first_seen_at, seq, clock_skew_ms FROM fleet_merged_hosts`, nil},
		{`INSERT INTO ` + S + `.host_sources (host, source, revision, status, error, synced_at, remote)
SELECT host, source, revision, status, error, synced_at, remote FROM fleet_merged_sources`, nil},
		{`INSERT INTO ` + S + `.host_copies (host, layer, owner, name, uses, views, last_used_at, last_viewed_at, state, pinned, first_seen_at, updated_at)
SELECT host, layer, owner, name, uses, views, last_used_at, last_viewed_at, state, pinned, first_seen_at, updated_at FROM fleet_merged_copies`, nil},
		// The insert's trigger took the merged counters for growth and
		// added them to the day buckets, which hold them already: the
		// same amounts, on the same days, go out again, so the buckets
		// end as they were.
		{`INSERT INTO ` + S + `.copy_deltas (day, layer, owner, name, uses, views)
SELECT (coalesce(last_used_at, now()) AT TIME ZONE 'UTC')::date, layer, owner, name, -uses, 0 FROM fleet_merged_copies WHERE uses > 0
UNION ALL
SELECT (coalesce(last_viewed_at, now()) AT TIME ZONE 'UTC')::date, layer, owner, name, 0, -views FROM fleet_merged_copies WHERE views > 0`, nil},
		{`SELECT ` + S + `.fold_rollups(NULL)`, nil},
	} {
		if _, err := tx.Exec(ctx, q.sql, q.args...); err != nil {
			return nil, fmt.Errorf("merge the host ids that differ only in case or normalization: %w", err)
		}
	}
	return notes, nil
}
