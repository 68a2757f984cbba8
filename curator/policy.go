package curator

import (
	"fmt"
	"slices"
	"sort"
	"time"
)

// Policy says when an idle copy becomes stale and when it is archived.
type Policy struct {
	StaleAfter   time.Duration
	ArchiveAfter time.Duration
	// MinIdle holds curation back while any copy was used this recently:
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

// BackInLayer is the reason a local copy archived before is active again:
// its folder is in its layer once more, where archiving had moved it from.
const BackInLayer = "its folder is back in its layer (put back by hand or by git), so it is no longer archived; idle time starts over"

// NoUsageYet is why a curation archives nothing in a workspace that never
// recorded a use or a view.
const NoUsageYet = "no usage has ever been recorded in this workspace; record usage (see README) or run curate --force"

// Candidate is a copy that won its name in the catalog, which the curator
// may change.
type Candidate struct {
	Copy Copy
	// Dir is the copy's directory and LayerDir its layer's, for a local
	// copy that archiving moves; both are empty for a marketplace copy,
	// which archiving only marks (sync then leaves it out).
	Dir, LayerDir string
}

// Change is one state change of a plan.
type Change struct {
	Copy Copy   `json:"copy"`
	Name string `json:"name"`
	From State  `json:"from"`
	To   State  `json:"to"`
	// Reason says why, with the idle time and where the last use came from.
	Reason string `json:"reason"`
	// Detail says what was done beyond the state, such as where an archived
	// directory went; empty in a plan not carried out.
	Detail string `json:"detail,omitempty"`
}

// Checked is what a curation knew of one copy it looked at, so a user can
// see why a skill is or is not idle.
type Checked struct {
	Copy   Copy   `json:"copy"`
	Name   string `json:"name"`
	State  State  `json:"state"`
	Pinned bool   `json:"pinned,omitempty"`
	// LastActive is the latest use, view or first sighting; nil when the
	// copy was never seen.
	LastActive *time.Time `json:"last_active,omitempty"`
	// LastUsed is the latest use or view; nil when there was none.
	LastUsed *time.Time `json:"last_used,omitempty"`
	// LastSource is where the latest use or view came from: cli, mcp, hook
	// or import; empty when there was none.
	LastSource Source `json:"last_source,omitempty"`
}

// Plan is what a curation would do.
type Plan struct {
	Checked int       `json:"checked"`
	Changes []Change  `json:"changes"`
	Skills  []Checked `json:"skills"`
	// Skipped says why nothing was considered, when so.
	Skipped string `json:"skipped"`
	// ArchiveHeld says why nothing is archived although some copy is idle
	// long enough (NoUsageYet); those copies only become stale. Always in
	// the JSON, "" when nothing is held, as docs/usage.md shows it.
	ArchiveHeld string `json:"archive_held"`
}

// Plan decides, at now, what becomes of each candidate: active becomes
// stale after StaleAfter idle, active or stale becomes archived after
// ArchiveAfter, stale becomes active when used since. Pinned copies never
// change. Without force, nothing changes while any use is more recent than
// MinIdle, and nothing is archived until the workspace recorded a use or
// a view at all.
func (p Policy) Plan(u *Usage, candidates []Candidate, now time.Time, force bool) Plan {
	plan := Plan{Changes: []Change{}, Skills: []Checked{}}
	if !force && p.MinIdle > 0 {
		if last, c := latestUse(u); !last.IsZero() && now.Sub(last) < p.MinIdle {
			// "the skill": a bare name read as the tool's own when the
			// skill is the built-in skillsync; the setting by its config
			// path, for whoever wants to change it.
			plan.Skipped = fmt.Sprintf("the skill %s was used %s ago, within curator.min_idle (%s): curation waits (--force curates anyway)",
				c.Name, now.Sub(last).Round(time.Second), p.MinIdle)
			return plan
		}
	}
	holdArchive := !force && !u.EverUsed()
	sorted := slices.Clone(candidates)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Copy.String() < sorted[j].Copy.String() })
	for _, cand := range sorted {
		c := cand.Copy
		if !slices.Contains(p.Layers, c.Layer.String()) {
			continue
		}
		plan.Checked++
		s, ok := u.Skills[c]
		if !ok {
			plan.Skills = append(plan.Skills, Checked{Copy: c, Name: c.Name, State: Active})
			continue
		}
		state := u.StateOf(c)
		plan.Skills = append(plan.Skills, checked(c, state, s))
		if s.Pinned || s.FirstSeenAt == nil && s.LastUsedAt == nil && s.LastViewedAt == nil {
			continue
		}
		idle := now.Sub(s.LastActive())
		why := fmt.Sprintf("idle %s", days(idle))
		if s.LastSource != "" {
			why += ", last used through " + string(s.LastSource)
		} else {
			why += ", never used"
		}
		change := func(to State, reason string) {
			plan.Changes = append(plan.Changes, Change{Copy: c, Name: c.Name, From: state, To: to, Reason: reason})
		}
		switch {
		case state == Archived && cand.Dir != "":
			// Archiving moves a local copy's folder out of its layer:
			// one in its place was put back (by hand, by git), and is
			// the user's skill again, not hidden as the one archived.
			change(Active, BackInLayer)
		case state == Archived:
		case idle >= p.ArchiveAfter && !holdArchive:
			change(Archived, fmt.Sprintf("%s; archive_after %s", why, days(p.ArchiveAfter)))
		case idle >= p.ArchiveAfter && holdArchive:
			plan.ArchiveHeld = NoUsageYet
			if state == Active {
				change(Stale, fmt.Sprintf("%s; stale_after %s; archiving held: no usage recorded yet", why, days(p.StaleAfter)))
			}
		case state == Stale && usedSince(s):
			change(Active, "used since it became stale, through "+string(s.LastSource))
		case state == Active && idle >= p.StaleAfter:
			change(Stale, fmt.Sprintf("%s; stale_after %s", why, days(p.StaleAfter)))
		}
	}
	return plan
}

func checked(c Copy, state State, s *SkillUsage) Checked {
	out := Checked{Copy: c, Name: c.Name, State: state, Pinned: s.Pinned, LastSource: s.LastSource}
	if t := s.LastActive(); !t.IsZero() {
		out.LastActive = &t
	}
	for _, t := range []*time.Time{s.LastUsedAt, s.LastViewedAt} {
		if later(t, out.LastUsed) {
			out.LastUsed = t
		}
	}
	return out
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

// latestUse returns the latest use or view of any copy, and which copy;
// ties go to the copy whose key sorts first, so the message is stable.
func latestUse(u *Usage) (time.Time, Copy) {
	var last time.Time
	var copy Copy
	for c, s := range u.Skills {
		for _, t := range []*time.Time{s.LastUsedAt, s.LastViewedAt} {
			if t != nil && (t.After(last) || t.Equal(last) && c.String() < copy.String()) {
				last, copy = *t, c
			}
		}
	}
	return last, copy
}

// days renders a duration in days when it is that long.
func days(d time.Duration) string {
	if d >= 48*time.Hour {
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
	return d.Round(time.Minute).String()
}

// Summary is one line for a curation's outcome, as the usage file's
// curator.last_summary keeps it.
func (p Plan) Summary() string {
	if p.Skipped != "" {
		return "skipped: " + p.Skipped
	}
	counts := map[State]int{}
	for _, c := range p.Changes {
		counts[c.To]++
	}
	s := fmt.Sprintf("checked %d: %d stale, %d archived, %d reactivated", p.Checked, counts[Stale], counts[Archived], counts[Active])
	if p.ArchiveHeld != "" {
		s += "; archiving held: " + p.ArchiveHeld
	}
	return s
}
