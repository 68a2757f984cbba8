package fleet

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/skillsync/skillsync/internal/hostid"
)

// HostStatus is one host as fleet status shows it.
type HostStatus struct {
	Host        string    `json:"host"`
	Environment string    `json:"environment"`
	Version     string    `json:"version"`
	LastSeenAt  time.Time `json:"last_seen_at"`
	Skills      int       `json:"skills"`
	LastError   string    `json:"last_error"`
	// Silent is set when the last heartbeat is older than the window
	// asked for; Failing when the last sync or a source failed.
	Silent  bool           `json:"silent"`
	Failing bool           `json:"failing"`
	Sources []SourceStatus `json:"sources"`
	// Uses and Views of the skill asked for (--skill), else zero.
	Uses  int64 `json:"uses,omitempty"`
	Views int64 `json:"views,omitempty"`
	// ClockSkewMS is how far the host's clock ran from the store
	// server's at its last push, in milliseconds (host less server:
	// positive when ahead); nil when not measured. Its uses are dated by
	// the server's clock; past MaxSkew its pushes are refused, and the
	// host is failing.
	ClockSkewMS *int64 `json:"clock_skew_ms"`
	// Lookalikes are the other hosts whose ids look like this one's
	// (hostid.Skeleton: a Cyrillic а for a Latin a) without being a
	// spelling of it: not merged, but likely a mistake or a spoof.
	Lookalikes []string `json:"lookalikes,omitempty"`
}

// ClockSkew is ClockSkewMS as a duration; ok is false when not measured.
// A value past what a duration holds (a row written by hand: a push
// keeps at most a few days) is the longest duration of its sign, not
// wrapped round to a small one that would show the host's clock right.
func (h HostStatus) ClockSkew() (skew time.Duration, ok bool) {
	if h.ClockSkewMS == nil {
		return 0, false
	}
	const most = int64(math.MaxInt64 / time.Millisecond)
	return time.Duration(min(max(*h.ClockSkewMS, -most), most)) * time.Millisecond, true
}

// SourceStatus is one source on one host.
type SourceStatus struct {
	Source   string `json:"source"`
	Revision string `json:"revision"`
	// Behind is set when a newer revision of the source was reported by
	// some host (the newest is the one first reported last).
	Behind bool   `json:"behind"`
	Status string `json:"status"`
	Error  string `json:"error"`
}

// StatusOptions narrow fleet status.
type StatusOptions struct {
	// StaleAfter makes a host whose last heartbeat is older silent.
	StaleAfter time.Duration
	// Skill lists only the hosts that place the skill, with their uses.
	Skill string
}

// Status returns every host, sorted by id, with its sources.
func (s *Store) Status(ctx context.Context, opts StatusOptions) ([]HostStatus, error) {
	now, err := s.ServerTime(ctx)
	if err != nil {
		return nil, err
	}
	hosts := map[string]*HostStatus{}
	var placed map[string][2]int64
	if opts.Skill != "" {
		var err error
		if placed, err = s.placing(ctx, opts.Skill); err != nil {
			return nil, err
		}
	}
	rows, err := s.pool.Query(ctx, `SELECT host, environment, version, skills, last_error, last_seen_at, clock_skew_ms FROM `+s.schema+`.hosts`)
	if err != nil {
		return nil, s.fail("read hosts", err)
	}
	// rowOf is the row each canonical id is shown from: pushes write
	// canonical ids (hostid.Canonical), and a row another spelling
	// holds (written by hand) is the same host, shown once.
	rowOf := map[string]string{}
	for rows.Next() {
		var h HostStatus
		if err := rows.Scan(&h.Host, &h.Environment, &h.Version, &h.Skills, &h.LastError, &h.LastSeenAt, &h.ClockSkewMS); err != nil {
			rows.Close()
			return nil, s.fail("read hosts", err)
		}
		if err := checkHostRow(h, now); err != nil {
			s.warn("fleet: skipped a host row: %v", err)
			continue
		}
		raw := h.Host
		h.Host = hostid.Canonical(h.Host)
		if placed != nil {
			u, ok := placed[raw]
			if !ok {
				continue
			}
			h.Uses, h.Views = u[0], u[1]
		}
		if have, ok := hosts[h.Host]; ok {
			s.warn("fleet: host rows %q and %q are one host, %q: showing the one seen last", rowOf[h.Host], raw, h.Host)
			if !h.LastSeenAt.After(have.LastSeenAt) {
				continue
			}
		}
		rowOf[h.Host] = raw
		h.LastSeenAt = h.LastSeenAt.UTC()
		h.Silent = opts.StaleAfter > 0 && now.Sub(h.LastSeenAt) > opts.StaleAfter
		skew, _ := h.ClockSkew()
		h.Failing = h.LastError != "" || skew > MaxSkew || skew < -MaxSkew
		h.Sources = []SourceStatus{}
		hosts[h.Host] = &h
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, s.fail("read hosts", err)
	}
	// Behind: the host's revision was first reported before the newest
	// of its source at the same remote (one hash join, not a look-up per
	// host): a fork that keeps the source's name is its own line of
	// revisions. A row dated past the server's clock was written by
	// hand, not by a push: it makes no revision the newest, or every
	// host would be behind.
	rows, err = s.pool.Query(ctx, `SELECT hs.host, hs.source, hs.revision, hs.status, hs.error,
	coalesce(hs.revision <> '' AND m.first_seen_at < n.newest, false)
FROM `+s.schema+`.host_sources hs
LEFT JOIN `+s.schema+`.revisions m ON m.source = hs.source AND m.remote = hs.remote AND m.revision = hs.revision
LEFT JOIN (SELECT source, remote, max(first_seen_at) AS newest FROM `+s.schema+`.revisions WHERE first_seen_at <= now() GROUP BY source, remote) n
	ON n.source = hs.source AND n.remote = hs.remote`)
	if err != nil {
		return nil, s.fail("read sources", err)
	}
	defer rows.Close()
	for rows.Next() {
		var host string
		var src SourceStatus
		if err := rows.Scan(&host, &src.Source, &src.Revision, &src.Status, &src.Error, &src.Behind); err != nil {
			return nil, s.fail("read sources", err)
		}
		h, ok := hosts[hostid.Canonical(host)]
		if !ok || rowOf[h.Host] != host {
			continue
		}
		if err := checkSourceRow(src); err != nil {
			s.warn("fleet: skipped a source row of host %q: %v", host, err)
			continue
		}
		if src.Status == "failed" || src.Error != "" {
			h.Failing = true
		}
		h.Sources = append(h.Sources, src)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("read sources", err)
	}
	// Lookalikes: ids of one skeleton, all of them hosts shown (with
	// --skill, among the hosts that place it).
	bySkeleton := map[string][]string{}
	for id := range hosts {
		k := hostid.Skeleton(id)
		bySkeleton[k] = append(bySkeleton[k], id)
	}
	out := make([]HostStatus, 0, len(hosts))
	for _, h := range hosts {
		sort.Slice(h.Sources, func(i, j int) bool { return h.Sources[i].Source < h.Sources[j].Source })
		for _, id := range bySkeleton[hostid.Skeleton(h.Host)] {
			if id != h.Host {
				h.Lookalikes = append(h.Lookalikes, id)
			}
		}
		sort.Strings(h.Lookalikes)
		out = append(out, *h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Host < out[j].Host })
	return out, nil
}

// Lookalikes says, a line a pair, which hosts of hosts (as Status
// returns them) have ids that look alike without being one host.
func Lookalikes(hosts []HostStatus) []string {
	var out []string
	for _, h := range hosts {
		for _, other := range h.Lookalikes {
			if h.Host < other {
				out = append(out, fmt.Sprintf("hosts %q and %q look alike but are two hosts (a letter of another script, %s): a mistake in fleet.host, or a host posing as another",
					h.Host, other, differsAt(h.Host, other)))
			}
		}
	}
	return out
}

// differsAt says where two lookalike ids differ: the first characters
// that do, with their code points.
func differsAt(a, b string) string {
	ra, rb := []rune(a), []rune(b)
	for i := 0; i < len(ra) && i < len(rb); i++ {
		if ra[i] != rb[i] {
			return fmt.Sprintf("%q is %U, %q is %U", ra[i], ra[i], rb[i], rb[i])
		}
	}
	return "they differ in length"
}

// placing returns the hosts that place a skill (any copy not archived),
// with their uses and views of it.
func (s *Store) placing(ctx context.Context, name string) (map[string][2]int64, error) {
	// Each sum held in range (sat): rows out of range would overflow the
	// cast and fail the whole answer; checkCount then skips the host.
	rows, err := s.pool.Query(ctx, `SELECT host, `+s.schema+`.sat(sum(uses)), `+s.schema+`.sat(sum(views)) FROM `+s.schema+`.host_copies
WHERE lower(name) = lower($1) AND state <> 'archived' GROUP BY host`, name)
	if err != nil {
		return nil, s.fail("read the hosts of skill "+name, err)
	}
	defer rows.Close()
	out := map[string][2]int64{}
	for rows.Next() {
		var host string
		var uses, views int64
		if err := rows.Scan(&host, &uses, &views); err != nil {
			return nil, s.fail("read the hosts of skill "+name, err)
		}
		if checkCount("uses", uses) != nil || checkCount("views", views) != nil {
			s.warn("fleet: skipped host %q's usage of %s: counters out of range", host, name)
			continue
		}
		out[host] = [2]int64{uses, views}
	}
	return out, s.fail("read the hosts of skill "+name, rows.Err())
}

func checkHostRow(h HostStatus, now time.Time) error {
	if !ValidHostID(h.Host) {
		return fmt.Errorf("host id %q is not a valid host id", h.Host)
	}
	for _, f := range []struct{ what, v string }{{"environment", h.Environment}, {"version", h.Version}} {
		if err := checkText(f.what, f.v, maxText); err != nil {
			return fmt.Errorf("host %s: %w", h.Host, err)
		}
	}
	if len(h.LastError) > maxError {
		return fmt.Errorf("host %s: last error is %d bytes, more than %d", h.Host, len(h.LastError), maxError)
	}
	return checkTime("host "+h.Host+" last heartbeat", h.LastSeenAt, now)
}

func checkSourceRow(src SourceStatus) error {
	for _, f := range []struct{ what, v string }{{"source name", src.Source}, {"revision", src.Revision}, {"status", src.Status}} {
		if err := checkText(f.what, f.v, maxText); err != nil {
			return err
		}
	}
	if len(src.Error) > maxError {
		return fmt.Errorf("source %s: error is %d bytes, more than %d", src.Source, len(src.Error), maxError)
	}
	return nil
}

// Reporting returns how many valid hosts sent a heartbeat since since.
func (s *Store) Reporting(ctx context.Context, since time.Time) (int, error) {
	if err := s.ready(ctx); err != nil {
		return 0, err
	}
	rows, err := s.pool.Query(ctx, `SELECT host FROM `+s.schema+`.hosts WHERE last_seen_at >= $1 AND last_seen_at <= now() + interval '1 day'`, since)
	if err != nil {
		return 0, s.fail("count the hosts reporting", err)
	}
	defer rows.Close()
	// Distinct canonical ids: two spellings of one host are one host.
	seen := map[string]bool{}
	for rows.Next() {
		var host string
		if err := rows.Scan(&host); err != nil {
			return 0, s.fail("count the hosts reporting", err)
		}
		if ValidHostID(host) {
			seen[hostid.Canonical(host)] = true
		}
	}
	return len(seen), s.fail("count the hosts reporting", rows.Err())
}
