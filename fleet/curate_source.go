package fleet

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/repository"
)

// RetiredSkill is a skill a source curation retires (or would).
type RetiredSkill struct {
	Name string `json:"name"`
	// LastUsedAt is its last use or view on any host; nil when none.
	LastUsedAt *time.Time `json:"last_used_at"`
	// Hosts is how many hosts hold it.
	Hosts  int    `json:"hosts"`
	Reason string `json:"reason"`
}

// SourceCuration is what a curation of a marketplace source did.
type SourceCuration struct {
	Source string `json:"source"`
	// Hosts is how many hosts reported within stale_after.
	Hosts   int            `json:"hosts"`
	Retired []RetiredSkill `json:"retired"`
	// Kept is how many of the source's skills stay.
	Kept int `json:"kept"`
	// Skipped says why nothing was decided, when so.
	Skipped string `json:"skipped,omitempty"`
	DryRun  bool   `json:"dry_run,omitempty"`
	// Branch, Commit and Direct say what a git source was given.
	Branch string `json:"branch,omitempty"`
	Commit string `json:"commit,omitempty"`
	Direct bool   `json:"direct,omitempty"`
}

// SourceCurationRequest is a curation of one marketplace source, as the
// workspace configures it.
type SourceCurationRequest struct {
	Source string
	// Kind is the source's kind, for messages.
	Kind string
	// Skills are the names the workspace's cache holds of the source,
	// archived ones included, sorted; Base is the revision it holds.
	Skills []string
	Base   string
	// Direct publishes to the tracked branch (publish: direct) instead of
	// a review branch.
	Direct bool
	// StaleAfter, ArchiveAfter and MinHosts are the curator's policy.
	StaleAfter, ArchiveAfter time.Duration
	MinHosts                 int
	// Now is the moment idle time is judged at, the store server's time
	// when zero: the hosts' last uses are checked against that clock, and
	// a curating machine whose own runs weeks ahead would retire skills
	// in use. Clock, the time it is, dates what the curation writes (the
	// branch, the commit, the audit), Now when zero: a commit dated at a
	// later --now would claim a day that has not come.
	Now, Clock time.Time
	DryRun     bool
	Actor      string
	// Open opens the source for the retirement; it is called only when
	// skills are to be retired.
	Open  func() (repository.Repository, error)
	Audit *curator.Audit
}

// CurateSource retires, upstream, the skills of a marketplace source that
// the whole fleet left idle past archive_after and no host pins. Idle
// time runs from the last use or view on any host, or from when a host
// first reported the skill; a skill no host ever reported is kept. A
// source that archives in place (a database) archives them; a git source
// gets one commit moving them into .archive/, pushed to the review branch
// skillsync/curate-YYYY-MM-DD or, direct, to the tracked branch. Each is a
// line of the audit log. Nothing is retired while fewer than MinHosts
// hosts reported within stale_after.
func CurateSource(ctx context.Context, store *Store, req SourceCurationRequest) (*SourceCuration, error) {
	out := &SourceCuration{Source: req.Source, Retired: []RetiredSkill{}, DryRun: req.DryRun}
	var err error
	if req.Now.IsZero() {
		if req.Now, err = store.ServerTime(ctx); err != nil {
			return nil, err
		}
	}
	if out.Hosts, err = store.Reporting(ctx, req.Now.Add(-req.StaleAfter)); err != nil {
		return nil, err
	}
	if out.Hosts < req.MinHosts {
		out.Skipped = waitMessage(out.Hosts, req.StaleAfter, req.MinHosts, "nothing is retired")
		out.Kept = len(req.Skills)
		return out, nil
	}
	list, err := store.Usage(ctx, UsageOptions{Source: req.Source, Since: req.Now.Add(-req.ArchiveAfter)})
	if err != nil {
		return nil, err
	}
	out.plan(req, list)
	if req.DryRun || len(out.Retired) == 0 {
		return out, nil
	}
	r, err := req.Open()
	if err != nil {
		return out, err
	}
	defer repository.Close(r)
	return out, out.retire(ctx, r, req)
}

// plan decides which of req.Skills retire, from the fleet's usage list.
func (out *SourceCuration) plan(req SourceCurationRequest, list []SkillUsage) {
	// Copies whose names differ only in case are one skill to a source
	// (a rename from PDF to pdf leaves both in the store): merged, the
	// latest use and view, the earliest report, any pin, the most hosts.
	byName := map[string]SkillUsage{}
	for _, u := range list {
		k := layering.Key(u.Name)
		if have, ok := byName[k]; ok {
			u = mergeUsage(have, u)
		}
		byName[k] = u
	}
	for _, n := range req.Skills {
		u, known := byName[layering.Key(n)]
		if !known || u.Pinned {
			out.Kept++
			continue
		}
		last := u.FirstSeenAt
		var lastUse *time.Time
		for _, t := range []*time.Time{u.LastUsedAt, u.LastViewedAt} {
			if t != nil && t.After(last) {
				last = *t
			}
			if t != nil && (lastUse == nil || t.After(*lastUse)) {
				lastUse = t
			}
		}
		idle := req.Now.Sub(last)
		if idle < req.ArchiveAfter {
			out.Kept++
			continue
		}
		why := "never used on any host"
		if lastUse != nil {
			why = "last used " + lastUse.UTC().Format(time.DateOnly)
		}
		out.Retired = append(out.Retired, RetiredSkill{Name: n, LastUsedAt: lastUse, Hosts: u.Placed,
			Reason: fmt.Sprintf("idle %s across the fleet (%s, held by %d %s); archive_after %s", idleText(idle), why, u.Placed, map[bool]string{true: "host", false: "hosts"}[u.Placed == 1], req.ArchiveAfter)})
	}
}

// retire takes the planned skills out of the source r and audits it.
func (out *SourceCuration) retire(ctx context.Context, r repository.Repository, req SourceCurationRequest) error {
	name := req.Source
	retire := make([]string, len(out.Retired))
	for i, s := range out.Retired {
		retire[i] = s.Name
	}
	_, remote := r.(repository.Fetcher)
	if ar, ok := r.(repository.Archiver); ok && !remote {
		rev, err := ar.Archive(ctx, retire, req.Actor)
		if err != nil {
			return fmt.Errorf("curate source %s: %w", name, err)
		}
		out.Commit = string(rev)
		return out.audit(req, fmt.Sprintf("archived in source %s at revision %s (skillsync restore --source %s NAME brings one back)", name, rev, name))
	}
	pub, ok := r.(repository.Publisher)
	if !remote || !ok {
		return fmt.Errorf("curate source %s: retiring skills upstream is supported for git and postgres sources, not %s; --dry-run shows the plan", name, req.Kind)
	}
	var msg strings.Builder
	fmt.Fprintf(&msg, "Retire %d skills idle across the fleet\n\nMoved into %s/ by skillsync curate --source %s --fleet (%d hosts reporting).\nRevert this commit to bring them back.\n\n", len(retire), repository.ArchiveDir, name, out.Hosts)
	for _, s := range out.Retired {
		last := "never used"
		if s.LastUsedAt != nil {
			last = "last used " + s.LastUsedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(&msg, "- %s: %s, on %d hosts\n", s.Name, last, s.Hosts)
	}
	branch := ""
	if !req.Direct {
		branch = "skillsync/curate-" + req.at().UTC().Format(time.DateOnly)
	}
	res, err := pub.Publish(ctx, repository.PublishRequest{Name: "curate", Archive: retire, Base: repository.Revision(req.Base), Branch: branch,
		Direct: req.Direct, Message: msg.String(), Author: req.Actor, When: req.at()})
	if err != nil {
		return fmt.Errorf("curate source %s: %w", name, err)
	}
	out.Branch, out.Commit, out.Direct = res.Branch, string(res.Commit), res.Direct
	return out.audit(req, fmt.Sprintf("moved into %s/ upstream on branch %s", repository.ArchiveDir, out.Branch))
}

// at is the time that dates what the curation writes: its Clock.
func (req SourceCurationRequest) at() time.Time {
	if req.Clock.IsZero() {
		return req.Now
	}
	return req.Clock
}

// audit writes a line of the audit log for each retired skill.
func (out *SourceCuration) audit(req SourceCurationRequest, how string) error {
	var events []curator.Event
	for _, s := range out.Retired {
		events = append(events, curator.Event{TS: req.at(), Actor: req.Actor, Op: curator.OpArchived, Target: "marketplace:" + out.Source + "/" + s.Name,
			From: "active", To: "archived", Commit: out.Commit, Detail: s.Reason + "; " + how})
	}
	if err := req.Audit.Append(events...); err != nil {
		return fmt.Errorf("retired %d skills of %s, but the audit log was not written: %w", len(events), out.Source, err)
	}
	return nil
}

// idleText is an idle time in days, or hours under two days.
func idleText(d time.Duration) string {
	if d < 48*time.Hour {
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// mergeUsage folds b into a for plan: what keeps a skill wins.
func mergeUsage(a, b SkillUsage) SkillUsage {
	a.Pinned = a.Pinned || b.Pinned
	a.Placed = max(a.Placed, b.Placed)
	if !b.FirstSeenAt.IsZero() && (a.FirstSeenAt.IsZero() || b.FirstSeenAt.Before(a.FirstSeenAt)) {
		a.FirstSeenAt = b.FirstSeenAt
	}
	a.LastUsedAt, a.LastViewedAt = latest(a.LastUsedAt, b.LastUsedAt), latest(a.LastViewedAt, b.LastViewedAt)
	return a
}

// latest is the later of two times that may be missing (nil).
func latest(a, b *time.Time) *time.Time {
	if a == nil || (b != nil && b.After(*a)) {
		return b
	}
	return a
}
