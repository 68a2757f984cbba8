package fleet

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/internal/hostid"
)

// Heartbeat is what a host says of itself on every push.
type Heartbeat struct {
	Host        string
	Environment string
	Version     string
	// Skills is how many skills the host places.
	Skills int
	// LastError is the last sync's error, "" when it succeeded.
	LastError string
	Sources   []SourceState
	// At is the host's clock when the push starts (Store.Push): the
	// store measures from it how far the host's clock runs from the
	// server's, and dates the host's uses by the server's clock (zero:
	// not measured, nothing corrected). The store keeps its own time as
	// the heartbeat's.
	At time.Time
}

// SourceState is one source on a host.
type SourceState struct {
	Source   string `json:"source"`
	Revision string `json:"revision"`
	// Status is the last sync's result for the source: ok, partial,
	// failed, unchanged...
	Status   string    `json:"status"`
	Error    string    `json:"error"`
	SyncedAt time.Time `json:"synced_at"`
	// Remote is a key of where the source is (RemoteKey of its URL and
	// ref in the lock), "" when unknown: a host on a fork that keeps the
	// source's name is compared with the fork's hosts, not the source's.
	Remote string `json:"remote,omitempty"`
}

// Record is a host's usage of one copy: absolute counters since the host
// first saw it, and the last times.
type Record struct {
	Copy         curator.Copy
	Uses, Views  int64
	LastUsedAt   time.Time
	LastViewedAt time.Time
	// State is the host's curation state of the copy (active, stale,
	// archived).
	State  string
	Pinned bool
}

// PushResult is what a push did.
type PushResult struct {
	// Seq is the host's push count after this one.
	Seq int64 `json:"seq"`
	// Records is how many usage records were written; Skipped are the
	// ones refused, each with why.
	Records int      `json:"records"`
	Skipped []string `json:"skipped,omitempty"`
	// skippedCopies are the copies of the records skipped.
	skippedCopies []string
	// Uses and Views are what the push added to the fleet's buckets.
	Uses  int64 `json:"uses"`
	Views int64 `json:"views"`
	// ClockSkewMS is how far the host's clock ran from the store
	// server's, in milliseconds (host less server: positive when ahead);
	// nil when the heartbeat named no time.
	ClockSkewMS *int64 `json:"clock_skew_ms,omitempty"`
}

// Push records hb and recs in one transaction. It is idempotent: counters
// only grow, and only their growth is added to the per-day buckets, so
// sending the same state again adds nothing. The host is hb.Host's
// canonical id; the counters are those of hb.Host as spelled, kept apart
// from the other spellings' and added to them in the host's. A record that fails its
// checks is skipped and named in the result; a heartbeat that fails them
// refuses the whole push.
func (s *Store) Push(ctx context.Context, hb Heartbeat, recs []Record) (PushResult, error) {
	return s.push(ctx, hb, recs, false)
}

// errFirstPush is push's refusal of a push the store would count as the
// host's first though the host said it acknowledged earlier ones.
var errFirstPush = errors.New("the store holds no earlier push of this host")

// push is Push. With known, the host says the store acknowledged earlier
// pushes of it: when the store counts this one as its first (the host's
// row deleted, the store reset), the push is rolled back whole and
// errFirstPush returned, so that the caller sends its counters less what
// the store still counts (Push.lost) rather than whole.
func (s *Store) push(ctx context.Context, hb Heartbeat, recs []Record, known bool) (PushResult, error) {
	// hb.At is the host's clock now, on this process's monotonic clock.
	start := time.Now()
	var res PushResult
	if len(recs) > maxRecords {
		return res, fmt.Errorf("fleet push: %d records, more than the %d one push may send", len(recs), maxRecords)
	}
	if err := s.ready(ctx); err != nil {
		return res, err
	}
	// The server's clock, not the host's: a host whose clock runs days
	// ahead would pass its own check, and its future last use would hide
	// the copy from every reader.
	var now time.Time
	t0 := time.Now()
	if err := s.pool.QueryRow(ctx, "SELECT now()").Scan(&now); err != nil {
		return res, s.fail("read the server's time", err)
	}
	t1 := time.Now()
	// One host, whatever the case or normalization of its id; the
	// spelling keeps its own counters (spelling_copies), so that two
	// workspaces of the host under two spellings add up.
	spelling := hb.Host
	if !ValidHostID(spelling) {
		return res, fmt.Errorf("fleet push: host id %q: use 1 to %d printable characters, no control characters", spelling, maxText)
	}
	hb.Host = hostid.Canonical(hb.Host)
	skew, measured := clockSkew(hb.At, start, t0, t1, now)
	if measured {
		ms := skew.Milliseconds()
		res.ClockSkewMS = &ms
		if skew > MaxSkew || skew < -MaxSkew {
			return res, s.refuseSkew(ctx, hb, skew, now)
		}
	}
	// Times go by the server's clock: the host's, less its skew, and
	// none past the server's now (a use dated ahead would keep a skill
	// fresh until that time came).
	corr := correction(skew)
	hb.Sources = slices.Clone(hb.Sources)
	for i := range hb.Sources {
		hb.Sources[i].SyncedAt = notAhead(dated(hb.Sources[i].SyncedAt, corr), now)
	}
	if err := checkHeartbeat(&hb, now); err != nil {
		return res, fmt.Errorf("fleet push: %w", err)
	}
	good := make([]Record, 0, len(recs))
	seen := make(map[curator.Copy]bool, len(recs))
	for _, r := range recs {
		// A time still ahead of the server's now, by any margin, is one
		// a clock ahead wrote (this host's before it was put right, its
		// skew at that use unknown now): the use happened by now. Were
		// the record skipped, its counts would wait until the real time
		// caught up with it (for a clock years ahead, never), as every
		// later use of the copy keeps the latest time.
		r.LastUsedAt = notAhead(dated(r.LastUsedAt, corr), now)
		r.LastViewedAt = notAhead(dated(r.LastViewedAt, corr), now)
		if err := checkRecord(r, now); err != nil {
			res.Skipped = append(res.Skipped, err.Error())
			res.skippedCopies = append(res.skippedCopies, r.Copy.String())
			continue
		}
		if seen[r.Copy] {
			res.Skipped = append(res.Skipped, fmt.Sprintf("copy %s: sent twice", r.Copy))
			res.skippedCopies = append(res.skippedCopies, r.Copy.String())
			continue
		}
		seen[r.Copy] = true
		good = append(good, r)
	}
	var err error
	for attempt := 1; ; attempt++ {
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			// Every statement in one round trip, the heartbeat's
			// first: it locks the host's row.
			b := &pgx.Batch{}
			s.heartbeat(b, hb, res.ClockSkewMS, &res.Seq, known)
			s.records(b, hb.Host, spelling, good, &res.Uses, &res.Views)
			return tx.SendBatch(ctx, b).Close()
		})
		// A push chosen as a deadlock's victim (an operator's change
		// of host_copies folds at once, locking the rollups' rows) is
		// rolled back whole and runs again: it counted nothing.
		if attempt == maxAttempts || !retryable(err) || ctx.Err() != nil {
			break
		}
	}
	if errors.Is(err, errFirstPush) {
		return PushResult{}, errFirstPush
	}
	if err != nil {
		return PushResult{}, s.fail("push of host "+hb.Host, err)
	}
	res.Records = len(good)
	// One push in FoldEvery folds the rollups' deltas, after its own
	// commit and after it returns: the push is done whatever the fold
	// does. Close waits for the fold.
	every := s.cfg.FoldEvery
	if every == 0 {
		every = foldEvery
	}
	if len(good) > 0 && every > 0 && rand.IntN(every) == 0 {
		s.folds.Add(1)
		go func() {
			defer s.folds.Done()
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Timeout)
			defer cancel()
			if err := s.Fold(fctx); err != nil {
				s.warn("fleet: %v", err)
			}
		}()
	}
	return res, nil
}

// foldEvery is Config.FoldEvery's default: a fold's cost is mostly one
// update per copy it touches, so larger folds cost less per push, and
// readers add at most about this many pushes' deltas.
const foldEvery = 64

// maxFold bounds the deltas one fold moves, so that a fold ends within a
// push's timeout however far the folds fell behind; the next folds move
// the rest.
const maxFold = 100_000

// foldLock is the first key of the advisory lock one fold holds ("fold").
const foldLock = 0x666f6c64

// Fold moves the changes pushes appended (copy_deltas) into the per-copy
// rollups fleet usage reads. Pushes fold now and then by themselves;
// readers add what is not folded yet, so Fold changes no answer, only
// how much a read adds up. It moves at most 100,000 deltas, and returns
// at once when another fold runs.
func (s *Store) Fold(ctx context.Context) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var mine bool
		if err := tx.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock($1, hashtext($2))", int32(foldLock), s.cfg.Schema).Scan(&mine); err != nil || !mine {
			return err
		}
		_, err := tx.Exec(ctx, "SELECT "+s.schema+".fold_rollups($1)", maxFold)
		return err
	})
	return s.fail("fold the usage rollups", err)
}

// maxAttempts bounds the runs of one push that a deadlock or a
// serialization failure rolled back.
const maxAttempts = 4

// retryable reports whether err rolled a transaction back that may simply
// run again: a deadlock or a serialization failure.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

func checkHeartbeat(hb *Heartbeat, now time.Time) error {
	if !ValidHostID(hb.Host) {
		return fmt.Errorf("host id %q: use 1 to %d printable characters, no control characters", hb.Host, maxText)
	}
	for _, f := range []struct{ what, v string }{{"environment", hb.Environment}, {"version", hb.Version}} {
		if err := checkText(f.what, f.v, maxText); err != nil {
			return fmt.Errorf("host %s: %w", hb.Host, err)
		}
	}
	if hb.Skills < 0 || int64(hb.Skills) > MaxCount {
		return fmt.Errorf("host %s: skill count %d is out of range", hb.Host, hb.Skills)
	}
	if len(hb.Sources) > maxSources {
		return fmt.Errorf("host %s: %d sources, more than %d", hb.Host, len(hb.Sources), maxSources)
	}
	hb.LastError = cleanError(hb.LastError)
	names := map[string]bool{}
	for i := range hb.Sources {
		src := &hb.Sources[i]
		for _, f := range []struct{ what, v string }{{"source name", src.Source}, {"revision", src.Revision}, {"status", src.Status}} {
			if err := checkText(f.what, f.v, maxText); err != nil {
				return fmt.Errorf("host %s: %w", hb.Host, err)
			}
		}
		if src.Source == "" || names[src.Source] {
			return fmt.Errorf("host %s: source name %q is empty or repeated", hb.Host, src.Source)
		}
		names[src.Source] = true
		if err := checkTime("sync time of source "+src.Source, src.SyncedAt, now); err != nil {
			return fmt.Errorf("host %s: %w", hb.Host, err)
		}
		src.Error = cleanError(src.Error)
	}
	return checkTime("heartbeat time", hb.At, now)
}

// heartbeat queues the upsert of the host's row, which locks it to the
// end of the transaction, and the replacement of its sources; the row's
// push count goes to seq. With known, a count of 1 fails the batch with
// errFirstPush.
func (s *Store) heartbeat(b *pgx.Batch, hb Heartbeat, skewMS *int64, seq *int64, known bool) {
	// pushed_by is this skillsync's schema version: a push of one before
	// version 4 names none, and is refused (migration 4).
	b.Queue(`INSERT INTO `+s.schema+`.hosts AS h (host, environment, version, skills, last_error, reported_at, clock_skew_ms, seq, pushed_by)
VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8)
ON CONFLICT (host) DO UPDATE SET environment = EXCLUDED.environment, version = EXCLUDED.version, skills = EXCLUDED.skills,
	last_error = EXCLUDED.last_error, reported_at = EXCLUDED.reported_at, clock_skew_ms = EXCLUDED.clock_skew_ms, last_seen_at = now(), seq = h.seq + 1,
	pushed_by = EXCLUDED.pushed_by
RETURNING seq`, hb.Host, hb.Environment, hb.Version, hb.Skills, hb.LastError, nullTime(hb.At), skewMS, len(migrations)).QueryRow(func(row pgx.Row) error {
		if err := row.Scan(seq); err != nil {
			return fmt.Errorf("heartbeat: %w", err)
		}
		if known && *seq == 1 {
			return errFirstPush
		}
		return nil
	})
	n := len(hb.Sources)
	names, revs, statuses, errs, remotes := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	synced := make([]*time.Time, n)
	for i, src := range hb.Sources {
		names[i], revs[i], statuses[i], errs[i], synced[i], remotes[i] = src.Source, src.Revision, src.Status, src.Error, nullTime(src.SyncedAt), src.Remote
	}
	sources := func(pgconn.CommandTag) error { return nil }
	b.Queue(`DELETE FROM `+s.schema+`.host_sources WHERE host = $1 AND NOT source = ANY($2)`, hb.Host, names).Exec(sources)
	b.Queue(`INSERT INTO `+s.schema+`.host_sources (host, source, revision, status, error, synced_at, remote)
SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::text[])
ON CONFLICT (host, source) DO UPDATE SET revision = EXCLUDED.revision, status = EXCLUDED.status, error = EXCLUDED.error, synced_at = EXCLUDED.synced_at,
	remote = EXCLUDED.remote
WHERE (host_sources.revision, host_sources.status, host_sources.error, host_sources.synced_at, host_sources.remote) IS DISTINCT FROM
	(EXCLUDED.revision, EXCLUDED.status, EXCLUDED.error, EXCLUDED.synced_at, EXCLUDED.remote)`,
		hb.Host, names, revs, statuses, errs, synced, remotes).Exec(sources)
	// A revision is first seen per source and remote. One the schema
	// knew before remotes (migration 3: remote '') keeps the time it was
	// first seen, so which revision is newest survives the upgrade.
	b.Queue(`INSERT INTO `+s.schema+`.revisions (source, remote, revision, first_seen_at)
SELECT t.source, t.remote, t.revision, coalesce(
	(SELECT o.first_seen_at FROM `+s.schema+`.revisions o WHERE o.source = t.source AND o.remote = '' AND o.revision = t.revision), clock_timestamp())
FROM unnest($1::text[], $2::text[], $3::text[]) AS t(source, remote, revision) WHERE t.revision <> ''
ON CONFLICT DO NOTHING`, names, remotes, revs).Exec(sources)
}

// records queues the write of the counters that spelling (the host id
// as the workspace spells it; host is its canonical form) pushed, and of
// their growth into the host's counters; host_copies' triggers add that
// growth to the day buckets: the uses to the day of the last use, the
// views to the day of the last view (with pushes minutes apart, that is
// the day they happened). The growth goes to uses and views.
func (s *Store) records(b *pgx.Batch, host, spelling string, recs []Record, uses, views *int64) {
	if len(recs) == 0 {
		return
	}
	n := len(recs)
	layers, owners, names, states := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	useN, viewN := make([]int64, n), make([]int64, n)
	lastUsed, lastViewed := make([]*time.Time, n), make([]*time.Time, n)
	pinned := make([]bool, n)
	for i, r := range recs {
		layers[i], owners[i], names[i], states[i] = r.Copy.Layer.String(), r.Copy.Owner, r.Copy.Name, r.State
		useN[i], viewN[i], pinned[i] = r.Uses, r.Views, r.Pinned
		lastUsed[i], lastViewed[i] = nullTime(r.LastUsedAt), nullTime(r.LastViewedAt)
	}
	// One statement. grown reads, per record, the spelling's counters
	// before this push (the host's row lock keeps them still: every
	// part of a statement sees the tables as they were before it), and
	// the counters of the host of no known spelling (spelling '', what
	// it held before schema version 4). The spelling's growth is what
	// its counters passed; a spelling's first push takes what it sends,
	// up to what '' holds, as counted already (out of '': each counted
	// use is taken once), and counts the rest. The spelling's counters
	// keep the greatest sent; the host's (host_copies) grow by the
	// growth, within MaxCount and never lower; host_copies' triggers
	// append their growth to the per-copy rollups' deltas (migration 2)
	// at the statement's end.
	b.Queue(`WITH input AS (
	SELECT * FROM unnest($3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::timestamptz[], $9::timestamptz[], $10::text[], $11::bool[])
		AS t(layer, owner, name, uses, views, last_used_at, last_viewed_at, state, pinned)
), before AS (
	SELECT i.*,
		CASE WHEN o.host IS NULL THEN LEAST(i.uses, GREATEST(coalesce(p.uses, 0), 0)) ELSE 0 END AS claim_uses,
		CASE WHEN o.host IS NULL THEN LEAST(i.views, GREATEST(coalesce(p.views, 0), 0)) ELSE 0 END AS claim_views,
		coalesce(o.uses, 0) AS old_uses, coalesce(o.views, 0) AS old_views
	FROM input i
	LEFT JOIN `+s.schema+`.spelling_copies o ON o.host = $1 AND o.spelling = $2 AND o.layer = i.layer AND o.owner = i.owner AND o.name = i.name
	LEFT JOIN `+s.schema+`.spelling_copies p ON p.host = $1 AND p.spelling = '' AND p.layer = i.layer AND p.owner = i.owner AND p.name = i.name
), grown AS (
	SELECT *, GREATEST(uses - claim_uses - old_uses, 0) AS grow_uses, GREATEST(views - claim_views - old_views, 0) AS grow_views FROM before
), spelled AS (
	INSERT INTO `+s.schema+`.spelling_copies AS c (host, spelling, layer, owner, name, uses, views)
	SELECT $1, $2, layer, owner, name, uses, views FROM grown
	ON CONFLICT (host, spelling, layer, owner, name) DO UPDATE SET uses = GREATEST(c.uses, EXCLUDED.uses), views = GREATEST(c.views, EXCLUDED.views)
	WHERE EXCLUDED.uses > c.uses OR EXCLUDED.views > c.views
	RETURNING 1
), claimed AS (
	UPDATE `+s.schema+`.spelling_copies p SET uses = p.uses - g.claim_uses, views = p.views - g.claim_views
	FROM grown g WHERE p.host = $1 AND p.spelling = '' AND p.layer = g.layer AND p.owner = g.owner AND p.name = g.name
		AND (g.claim_uses > 0 OR g.claim_views > 0)
	RETURNING 1
), up AS (
	INSERT INTO `+s.schema+`.host_copies AS c (host, layer, owner, name, uses, views, last_used_at, last_viewed_at, state, pinned)
	SELECT $1, layer, owner, name, LEAST(grow_uses, $12), LEAST(grow_views, $12), last_used_at, last_viewed_at, state, pinned FROM grown
	ON CONFLICT (host, layer, owner, name) DO UPDATE SET
		uses = GREATEST(c.uses, LEAST(c.uses::numeric + EXCLUDED.uses, $12))::bigint, views = GREATEST(c.views, LEAST(c.views::numeric + EXCLUDED.views, $12))::bigint,
		last_used_at = GREATEST(c.last_used_at, EXCLUDED.last_used_at), last_viewed_at = GREATEST(c.last_viewed_at, EXCLUDED.last_viewed_at),
		state = EXCLUDED.state, pinned = EXCLUDED.pinned, updated_at = now()
	WHERE (c.uses, c.views, c.last_used_at, c.last_viewed_at, c.state, c.pinned) IS DISTINCT FROM
		(GREATEST(c.uses, LEAST(c.uses::numeric + EXCLUDED.uses, $12))::bigint, GREATEST(c.views, LEAST(c.views::numeric + EXCLUDED.views, $12))::bigint,
		 GREATEST(c.last_used_at, EXCLUDED.last_used_at), GREATEST(c.last_viewed_at, EXCLUDED.last_viewed_at), EXCLUDED.state, EXCLUDED.pinned)
	RETURNING 1
)
SELECT coalesce(sum(grow_uses), 0)::bigint, coalesce(sum(grow_views), 0)::bigint,
	(SELECT count(*) FROM up) + (SELECT count(*) FROM spelled) + (SELECT count(*) FROM claimed)
FROM grown`,
		host, spelling, layers, owners, names, useN, viewN, lastUsed, lastViewed, states, pinned, int64(MaxCount)).QueryRow(func(row pgx.Row) error {
		var written int64
		if err := row.Scan(uses, views, &written); err != nil {
			return fmt.Errorf("usage records: %w", err)
		}
		return nil
	})
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// clockSkew is how far the host's clock runs from the server's (host
// less server): at, the host's clock when the push started (start, on
// this process's monotonic clock), moved on to the middle of the round
// trip that read the server's time now (t0 to t1), less now. ok is false
// when at is zero: the host named no time.
func clockSkew(at, start, t0, t1, now time.Time) (skew time.Duration, ok bool) {
	if at.IsZero() {
		return 0, false
	}
	host := at.Round(0).Add(t0.Sub(start) + t1.Sub(t0)/2)
	return host.Sub(now), true
}

// correction is what a push takes from the host's times to date them by
// the server's clock: the skew in whole seconds, none under MinSkew (a
// push's own latency), so that the same record pushed again dates the
// same.
func correction(skew time.Duration) time.Duration {
	if skew < MinSkew && skew > -MinSkew {
		return 0
	}
	return skew.Round(time.Second)
}

// dated is the host's time t by the server's clock; zero stays zero.
func dated(t time.Time, corr time.Duration) time.Time {
	if t.IsZero() {
		return t
	}
	return t.Add(-corr)
}

// notAhead is t, or now when t is later.
func notAhead(t, now time.Time) time.Time {
	if t.After(now) {
		return now
	}
	return t
}

// refuseSkew is the error of a push from a host whose clock runs more
// than MaxSkew from the server's: its times cannot be put right with any
// confidence. The skew is kept on the host's row, when it has one, so
// that fleet status shows why the host went silent.
func (s *Store) refuseSkew(ctx context.Context, hb Heartbeat, skew time.Duration, now time.Time) error {
	if _, err := s.pool.Exec(ctx, `UPDATE `+s.schema+`.hosts SET clock_skew_ms = $2 WHERE host = $1`, hb.Host, skew.Milliseconds()); err != nil {
		s.warn("fleet: record the clock skew of host %s: %v", hb.Host, err)
	}
	return fmt.Errorf("fleet push: %w: host %s's clock is %s the store server's (host %s, server %s), more than %s: set its clock right (NTP); its usage stays local until then",
		ErrClockSkew, hb.Host, SkewText(skew), hb.At.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339), MaxSkew)
}

// SkewText says a clock skew (host less server) in words: "3h0m0s ahead
// of", "2m5s behind", to the second.
func SkewText(skew time.Duration) string {
	if skew < 0 {
		return (-skew).Round(time.Second).String() + " behind"
	}
	return skew.Round(time.Second).String() + " ahead of"
}
