package fleet

import (
	"context"
	"sort"
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

// Usage returns per copy the fleet's uses and views since opts.Since, the
// hosts that used it then, and its last use anywhere; the most used first,
// the idle ones last.
func (s *Store) Usage(ctx context.Context, opts UsageOptions) ([]SkillUsage, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	since := opts.Since
	if since.IsZero() {
		since = time.Now().Add(-30 * 24 * time.Hour)
	}
	since = since.UTC()
	layer, owner := "", ""
	if opts.Source != "" {
		layer, owner = layering.Marketplace.String(), opts.Source
	}
	type key struct{ layer, owner, name string }
	type sums struct{ uses, views string }
	// The two aggregates read different tables: run them at once.
	var daySums map[key]sums
	var dayErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		rows, err := s.pool.Query(ctx, `SELECT layer, owner, name, sum(uses)::numeric::text, sum(views)::numeric::text FROM `+s.schema+`.usage_days
WHERE day >= ($1::timestamptz AT TIME ZONE 'UTC')::date AND ($2 = '' OR layer = $2 AND owner = $3)
GROUP BY layer, owner, name`, since, layer, owner)
		if err != nil {
			dayErr = err
			return
		}
		defer rows.Close()
		daySums = map[key]sums{}
		for rows.Next() {
			var k key
			var v sums
			if err := rows.Scan(&k.layer, &k.owner, &k.name, &v.uses, &v.views); err != nil {
				dayErr = err
				return
			}
			daySums[k] = v
		}
		dayErr = rows.Err()
	}()
	byKey := map[key]*SkillUsage{}
	err := func() error {
		rows, err := s.pool.Query(ctx, `SELECT layer, owner, name,
	count(*) FILTER (WHERE last_used_at >= $1)::int, max(last_used_at), bool_or(pinned), count(*) FILTER (WHERE state <> 'archived')::int,
	min(first_seen_at), max(last_viewed_at)
FROM `+s.schema+`.host_copies
WHERE ($2 = '' OR layer = $2 AND owner = $3)
GROUP BY layer, owner, name`, since, layer, owner)
		if err != nil {
			return err
		}
		defer rows.Close()
		now := time.Now()
		for rows.Next() {
			var k key
			var u SkillUsage
			if err := rows.Scan(&k.layer, &k.owner, &k.name, &u.Hosts, &u.LastUsedAt, &u.Pinned, &u.Placed, &u.FirstSeenAt, &u.LastViewedAt); err != nil {
				return err
			}
			c, err := copyOf(k.layer, k.owner, k.name)
			if err == nil && u.LastUsedAt != nil {
				err = checkTime("last use", *u.LastUsedAt, now)
			}
			if err == nil && u.LastViewedAt != nil {
				err = checkTime("last view", *u.LastViewedAt, now)
			}
			if err != nil {
				s.warn("fleet: skipped a usage row: %v", err)
				continue
			}
			if u.LastUsedAt != nil {
				t := u.LastUsedAt.UTC()
				u.LastUsedAt = &t
			}
			u.Copy, u.Name, u.Source = c, c.Name, sourceOf(c)
			byKey[k] = &u
		}
		return rows.Err()
	}()
	<-done
	if err == nil {
		err = dayErr
	}
	if err != nil {
		return nil, s.fail("read fleet usage", err)
	}
	for k, v := range daySums {
		u, ok := byKey[k]
		if !ok {
			continue // its copy row was skipped or is gone
		}
		nu, err1 := parseCount(v.uses)
		nv, err2 := parseCount(v.views)
		if err1 != nil || err2 != nil {
			s.warn("fleet: skipped the day buckets of %s: a sum is outside 0..%d", u.Copy, int64(MaxCount))
			continue
		}
		u.Uses, u.Views = nu, nv
	}
	out := make([]SkillUsage, 0, len(byKey))
	for _, u := range byKey {
		out = append(out, *u)
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

func sourceOf(c curator.Copy) string {
	switch c.Layer {
	case layering.Marketplace:
		return c.Owner
	case layering.User:
		return "user:" + c.Owner
	}
	return c.Layer.String()
}
