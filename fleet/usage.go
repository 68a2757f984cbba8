package fleet

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/layering"
)

// SkillUsage is one copy's use across the fleet in a window.
type SkillUsage struct {
	Name string `json:"name"`
	// Source is the marketplace source, or the layer (workspace, user,
	// global) of a local copy.
	Source string `json:"source"`
	Uses   int64  `json:"uses"`
	Views  int64  `json:"views"`
	// Hosts is how many hosts used it in the window.
	Hosts int `json:"hosts"`
	// LastUsedAt is its last use on any host, ever; nil when none.
	LastUsedAt *time.Time `json:"last_used_at"`
	// Copy is the copy the row is about.
	Copy curator.Copy `json:"-"`
	// Pinned is set when any host pins it.
	Pinned bool `json:"-"`
	// Placed is how many hosts hold it, in any state but archived.
	Placed int `json:"-"`
	// FirstSeenAt is when a host first reported it; LastViewedAt its last
	// view anywhere.
	FirstSeenAt  time.Time  `json:"-"`
	LastViewedAt *time.Time `json:"-"`
}

// UsageOptions narrow fleet usage.
type UsageOptions struct {
	// Source keeps the copies of one marketplace source.
	Source string
	// Since starts the window; the zero time means 30 days ago.
	Since time.Time
}

// Usage returns per copy the fleet's uses and views since the UTC day of
// opts.Since, the hosts whose last use of it is on that day or later, and
// its last use anywhere; the most used first, the idle ones last. It reads
// the per-copy rollups: one row per copy and per copy and day of the
// window, however many hosts report.
func (s *Store) Usage(ctx context.Context, opts UsageOptions) ([]SkillUsage, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	since := opts.Since
	if since.IsZero() {
		since = s.now().Add(-30 * 24 * time.Hour)
	}
	since = since.UTC()
	layer, owner := "", ""
	if opts.Source != "" {
		layer, owner = layering.Marketplace.String(), opts.Source
	}
	// One row per copy from the rollups (migration 2) and the deltas not
	// folded yet, in one statement: its totals, and the sums of its day
	// buckets in the window. The window starts at the UTC day of since,
	// for the uses, the views and the hosts alike.
	rows, err := s.pool.Query(ctx, `WITH st AS (
	SELECT layer, owner, name, sum(hosts) AS hosts, sum(placed) AS placed, sum(pinned) AS pinned,
		max(last_used_at) AS last_used_at, max(last_viewed_at) AS last_viewed_at, min(first_seen_at) AS first_seen_at
	FROM (
		SELECT layer, owner, name, hosts, placed, pinned, last_used_at, last_viewed_at, first_seen_at FROM `+s.schema+`.copy_stats
		UNION ALL
		SELECT layer, owner, name, hosts, placed, pinned, last_used_at, last_viewed_at, first_seen_at FROM `+s.schema+`.copy_deltas WHERE day IS NULL
	) x WHERE ($2 = '' OR layer = $2 AND owner = $3)
	GROUP BY layer, owner, name
), d AS (
	SELECT layer, owner, name, sum(uses) AS uses, sum(views) AS views, sum(last_users) AS users FROM (
		SELECT layer, owner, name, uses, views, last_users FROM `+s.schema+`.copy_days WHERE day >= ($1::timestamptz AT TIME ZONE 'UTC')::date
		UNION ALL
		SELECT layer, owner, name, uses, views, last_users FROM `+s.schema+`.copy_deltas WHERE day >= ($1::timestamptz AT TIME ZONE 'UTC')::date
	) y WHERE ($2 = '' OR layer = $2 AND owner = $3)
	GROUP BY layer, owner, name
)
SELECT st.layer, st.owner, st.name, st.last_used_at, st.pinned > 0, st.placed::text, st.first_seen_at, st.last_viewed_at,
	coalesce(d.uses, 0)::text, coalesce(d.views, 0)::text, coalesce(d.users, 0)::text, now()
FROM st LEFT JOIN d USING (layer, owner, name)
WHERE st.hosts > 0`, since, layer, owner)
	if err != nil {
		return nil, s.fail("read fleet usage", err)
	}
	defer rows.Close()
	// The server's clock, as a push checks times against it, not this
	// machine's: a reader whose clock runs behind would take the hosts'
	// honest recent uses for times ahead and leave them out, and a
	// curation would retire a skill in use.
	var now time.Time
	var out []SkillUsage
	// ahead are the copies whose latest use or view some host reports
	// too far ahead: their other hosts' times are read once the rows are.
	var ahead []int
	for rows.Next() {
		var layer, owner, name, placed, uses, views, users string
		var u SkillUsage
		var first *time.Time
		if err := rows.Scan(&layer, &owner, &name, &u.LastUsedAt, &u.Pinned, &placed, &first, &u.LastViewedAt, &uses, &views, &users, &now); err != nil {
			return nil, s.fail("read fleet usage", err)
		}
		c, err := copyOf(layer, owner, name)
		isAhead := u.LastUsedAt != nil && checkTime("last use", *u.LastUsedAt, now) != nil ||
			u.LastViewedAt != nil && checkTime("last view", *u.LastViewedAt, now) != nil
		if err == nil {
			if n, perr := parseCount(placed); perr != nil || n > maxHosts {
				err = fmt.Errorf("copy %s: the count of hosts holding it, %s, is outside 0..%d", c, placed, maxHosts)
			} else {
				u.Placed = int(n)
			}
		}
		if err != nil {
			s.warn("fleet: skipped a usage row: %v", err)
			continue
		}
		if first != nil {
			u.FirstSeenAt = *first
		}
		u.LastUsedAt = inUTC(u.LastUsedAt)
		u.Copy, u.Name, u.Source = c, c.Name, sourceOf(c)
		nu, err1 := parseSum(uses)
		nv, err2 := parseSum(views)
		nh, err3 := parseCount(users)
		if errors.Is(err1, errPastMax) || errors.Is(err2, errPastMax) {
			// Each host's counters are within MaxCount, their sum need
			// not be: shown as MaxCount, not as none, or one host that
			// pushes the most it may would make the skill look idle.
			s.warn("fleet: the uses or views of %s add up to more than %d; shown as %d", u.Copy, int64(MaxCount), int64(MaxCount))
			err1, err2 = nil, nil
		}
		switch {
		case err1 != nil || err2 != nil:
			s.warn("fleet: skipped the day buckets of %s: a sum is outside 0..%d", u.Copy, int64(MaxCount))
		case err3 != nil || nh > maxHosts:
			s.warn("fleet: skipped the host count of %s: outside 0..%d", u.Copy, maxHosts)
			u.Uses, u.Views = nu, nv
		default:
			u.Uses, u.Views, u.Hosts = nu, nv, int(nh)
		}
		if isAhead {
			ahead = append(ahead, len(out))
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("read fleet usage", err)
	}
	rows.Close()
	for _, i := range ahead {
		if err := s.timesNotAhead(ctx, &out[i], now); err != nil {
			return nil, err
		}
	}
	if out == nil {
		out = []SkillUsage{}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Uses != b.Uses {
			return a.Uses > b.Uses
		}
		if a.Views != b.Views {
			return a.Views > b.Views
		}
		return a.Copy.String() < b.Copy.String()
	})
	return out, nil
}

// parseCount reads a sum the database printed, refusing one out of range
// (a sum of hostile rows may overflow an int64).
func parseCount(s string) (int64, error) {
	var n int64
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, errOutOfRange
		}
		n = n*10 + int64(c-'0')
		if n > MaxCount {
			return 0, errOutOfRange
		}
	}
	return n, nil
}

// errPastMax is a sum of counters past MaxCount.
var errPastMax = errors.New("past the largest count")

// parseSum reads a sum of counters the database printed: one past
// MaxCount is MaxCount, with errPastMax.
func parseSum(s string) (int64, error) {
	n, err := parseCount(s)
	if err != nil && s != "" && strings.Trim(s, "0123456789") == "" {
		return MaxCount, errPastMax
	}
	return n, err
}

func sourceOf(c curator.Copy) string {
	switch c.Layer {
	case layering.Marketplace:
		return c.Owner
	case layering.User:
		return "user:" + c.Owner
	}
	return c.Layer.String()
}

// timesNotAhead puts in u the latest use and view of its copy among the
// hosts whose times are not more than MaxAhead past now: a row some host
// or hand wrote with a time days ahead is left out, not the copy.
func (s *Store) timesNotAhead(ctx context.Context, u *SkillUsage, now time.Time) error {
	s.warn("fleet: copy %s: a host reports its last use or view more than %s ahead; that time is left out", u.Copy, MaxAhead)
	limit := now.Add(MaxAhead)
	err := s.pool.QueryRow(ctx, `SELECT max(last_used_at) FILTER (WHERE last_used_at <= $4), max(last_viewed_at) FILTER (WHERE last_viewed_at <= $4)
FROM `+s.schema+`.host_copies WHERE lower(name) = lower($3) AND layer = $1 AND owner = $2 AND name = $3`,
		u.Copy.Layer.String(), u.Copy.Owner, u.Copy.Name, limit).Scan(&u.LastUsedAt, &u.LastViewedAt)
	if err != nil {
		return s.fail("read the last uses of "+u.Copy.String(), err)
	}
	u.LastUsedAt, u.LastViewedAt = inUTC(u.LastUsedAt), inUTC(u.LastViewedAt)
	return nil
}

// inUTC is t in UTC; nil stays nil.
func inUTC(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	utc := t.UTC()
	return &utc
}

// hasDays reports whether the store holds day counts of any of copies.
func (s *Store) hasDays(ctx context.Context, copies []curator.Copy) (bool, error) {
	layers, owners, names := make([]string, len(copies)), make([]string, len(copies)), make([]string, len(copies))
	for i, c := range copies {
		layers[i], owners[i], names[i] = c.Layer.String(), c.Owner, c.Name
	}
	var has bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+s.schema+`.copy_days d
JOIN unnest($1::text[], $2::text[], $3::text[]) AS c (layer, owner, name) USING (layer, owner, name))`, layers, owners, names).Scan(&has)
	return has, s.fail("read the fleet's day counts", err)
}
