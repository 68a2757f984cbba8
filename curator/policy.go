package curator

import (
	"fmt"
	"slices"
	"sort"
	"time"
)

// Policy says when an idle skill becomes stale and when it is archived.
type Policy struct {
	StaleAfter   time.Duration
	ArchiveAfter time.Duration
	// MinIdle holds curation back while any skill was used this recently:
	// someone is working, and the clock of their skills is running.
	MinIdle time.Duration
	// Layers are the catalog layers curated: workspace, user, marketplace.
	Layers []string
}

// DefaultPolicy is 30 days to stale, 90 to archived, 2 hours of quiet.
func DefaultPolicy() Policy {
	return Policy{StaleAfter: 720 * time.Hour, ArchiveAfter: 2160 * time.Hour, MinIdle: 2 * time.Hour,
		Layers: []string{"workspace", "user", "marketplace"}}
}

// Candidate is a catalog skill the curator may change.
type Candidate struct {
	Name  string
	Layer string
}

// Change is one state change of a plan.
type Change struct {
	Name   string `json:"name"`
	From   string `json:"from"`
	To     string `json:"to"`
	Reason string `json:"reason"`
}

// Plan is what a curation would do.
type Plan struct {
	Checked int      `json:"checked"`
	Changes []Change `json:"changes"`
	// Skipped says why nothing was considered, when so.
	Skipped string `json:"skipped"`
}

// Plan decides, at now, what becomes of each candidate: active becomes
// stale after StaleAfter idle, active or stale becomes archived after
// ArchiveAfter, stale becomes active when used since. Pinned skills never
// change. Without force, nothing changes while any use is more recent
// than MinIdle.
func (p Policy) Plan(u *Usage, candidates []Candidate, now time.Time, force bool) Plan {
	plan := Plan{Changes: []Change{}}
	if !force && p.MinIdle > 0 {
		if last, name := latestUse(u); !last.IsZero() && now.Sub(last) < p.MinIdle {
			plan.Skipped = fmt.Sprintf("%s was used %s ago, within min_idle %s: curation waits (--force curates anyway)",
				name, now.Sub(last).Round(time.Second), p.MinIdle)
			return plan
		}
	}
	sorted := slices.Clone(candidates)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, c := range sorted {
		if !slices.Contains(p.Layers, c.Layer) {
			continue
		}
		plan.Checked++
		s, ok := u.Skills[c.Name]
		if !ok || s.Pinned || s.FirstSeenAt == nil && s.LastUsedAt == nil && s.LastViewedAt == nil {
			continue
		}
		state := u.StateOf(c.Name)
		idle := now.Sub(s.LastActive())
		switch {
		case state == Archived:
		case idle >= p.ArchiveAfter:
			plan.Changes = append(plan.Changes, Change{c.Name, state, Archived, fmt.Sprintf("idle %s, archive_after %s", days(idle), days(p.ArchiveAfter))})
		case state == Stale && usedSince(s):
			plan.Changes = append(plan.Changes, Change{c.Name, Stale, Active, "used since it became stale"})
		case state == Active && idle >= p.StaleAfter:
			plan.Changes = append(plan.Changes, Change{c.Name, Active, Stale, fmt.Sprintf("idle %s, stale_after %s", days(idle), days(p.StaleAfter))})
		}
	}
	return plan
}

func usedSince(s *SkillUsage) bool {
	if s.StateSince == nil {
		return false
	}
	for _, t := range []*time.Time{s.LastUsedAt, s.LastViewedAt} {
		if t != nil && t.After(*s.StateSince) {
			return true
		}
	}
	return false
}

func latestUse(u *Usage) (time.Time, string) {
	var last time.Time
	var name string
	for n, s := range u.Skills {
		for _, t := range []*time.Time{s.LastUsedAt, s.LastViewedAt} {
			if t != nil && (t.After(last) || t.Equal(last) && n < name) {
				last, name = *t, n
			}
		}
	}
	return last, name
}

// days renders a duration in days when it is that long.
func days(d time.Duration) string {
	if d >= 48*time.Hour {
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
	return d.Round(time.Minute).String()
}

// SetState records a state change at now.
func (u *Usage) SetState(name, state string, now time.Time) {
	s := u.Skill(name)
	s.State = state
	s.StateSince = stamp(now)
}
