package skillsync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/fleet"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
)

// SourceCurateOptions change a curation of a marketplace source itself.
type SourceCurateOptions struct {
	// Now is the moment idle time is judged at; zero means now.
	Now time.Time
	// DryRun plans and changes nothing.
	DryRun bool
}

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

// CurateSource retires, upstream, the skills of the marketplace source
// name that the whole fleet left idle past curator.archive_after and no
// host pins: the team's scheduled job. Idle time runs from the last use or
// view on any host, or from when a host first reported the skill; a skill
// no host ever reported is kept. For a git source one commit moves them
// into .archive/<folder> (discovery never reads it), pushed to the review
// branch skillsync/curate-YYYY-MM-DD, or with publish: direct to the
// tracked branch; reverting the commit brings them back. Each is a line of
// the audit log. It refuses, saying why, while fewer than
// curator.min_hosts hosts reported within stale_after. Other kinds of
// source are not supported yet.
func (e *Engine) CurateSource(ctx context.Context, name string, opts SourceCurateOptions) (*SourceCuration, error) {
	f := e.cfg.Fleet
	if f == nil {
		return nil, noFleet()
	}
	src, ok := e.source(name)
	if !ok {
		return nil, usageErrorf("source %q is not in the config", name)
	}
	now := opts.Now
	if now.IsZero() {
		now = e.now()
	}
	out := &SourceCuration{Source: name, Retired: []RetiredSkill{}, DryRun: opts.DryRun}
	m, err := materialize.ReadManifest(e.layout.CacheDir())
	if err != nil {
		return nil, err
	}
	rec, ok := m.Sources[name]
	if !ok {
		return nil, fmt.Errorf("curate source %s: it is not synced yet: run skillsync sync", name)
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range rec.Skills {
			if !yield(n) {
				return
			}
		}
	})
	names = append(names, rec.Excluded...)
	slices.Sort(names)
	store, err := e.openFleet(ctx)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	policy := e.cfg.Curator
	if out.Hosts, err = store.Reporting(ctx, now.Add(-policy.StaleAfter)); err != nil {
		return nil, err
	}
	if out.Hosts < f.MinHosts {
		out.Skipped = fmt.Sprintf("fleet: %d hosts reported within stale_after %s, fewer than curator.min_hosts %d: nothing is retired",
			out.Hosts, policy.StaleAfter, f.MinHosts)
		out.Kept = len(names)
		return out, nil
	}
	list, err := store.Usage(ctx, fleet.UsageOptions{Source: name, Since: now.Add(-policy.ArchiveAfter)})
	if err != nil {
		return nil, err
	}
	byName := map[string]fleet.SkillUsage{}
	for _, u := range list {
		byName[layering.Key(u.Name)] = u
	}
	for _, n := range names {
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
		idle := now.Sub(last)
		if idle < policy.ArchiveAfter {
			out.Kept++
			continue
		}
		why := "never used on any host"
		if lastUse != nil {
			why = "last used " + lastUse.UTC().Format(time.DateOnly)
		}
		out.Retired = append(out.Retired, RetiredSkill{Name: n, LastUsedAt: lastUse, Hosts: u.Placed,
			Reason: fmt.Sprintf("idle %s across the fleet (%s, held by %d hosts); archive_after %s", idleText(idle), why, u.Placed, policy.ArchiveAfter)})
	}
	if opts.DryRun || len(out.Retired) == 0 {
		return out, nil
	}
	r, err := e.open(src, "")
	if err != nil {
		return out, err
	}
	defer closeRepository(r)
	retire := make([]string, len(out.Retired))
	for i, s := range out.Retired {
		retire[i] = s.Name
	}
	if ar, ok := r.(repository.Archiver); ok && !isRemote(r) {
		rev, err := ar.Archive(ctx, retire, e.actor)
		if err != nil {
			return out, fmt.Errorf("curate source %s: %w", name, err)
		}
		out.Commit = string(rev)
		return out, e.auditRetired(out, now, fmt.Sprintf("archived in source %s at revision %s (skillsync restore --source %s NAME brings one back)", name, rev, name))
	}
	pub, ok := r.(repository.Publisher)
	if !isRemote(r) || !ok {
		return out, fmt.Errorf("curate source %s: retiring skills upstream is supported for git and postgres sources, not %s; --dry-run shows the plan", name, src.Kind)
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
	base := repository.Revision(rec.Revision)
	direct := publishesDirect(src)
	branch := ""
	if !direct {
		branch = "skillsync/curate-" + now.UTC().Format(time.DateOnly)
	}
	res, err := pub.Publish(ctx, repository.PublishRequest{Name: "curate", Archive: retire, Base: base, Branch: branch,
		Direct: direct, Message: msg.String(), Author: e.actor, When: now})
	if err != nil {
		return out, fmt.Errorf("curate source %s: %w", name, err)
	}
	out.Branch, out.Commit, out.Direct = res.Branch, string(res.Commit), res.Direct
	return out, e.auditRetired(out, now, fmt.Sprintf("moved into %s/ upstream on branch %s", repository.ArchiveDir, out.Branch))
}

// auditRetired writes a line of the audit log for each retired skill.
func (e *Engine) auditRetired(out *SourceCuration, now time.Time, how string) error {
	var events []curator.Event
	for _, s := range out.Retired {
		events = append(events, curator.Event{TS: now, Actor: e.actor, Op: curator.OpArchived, Target: "marketplace:" + out.Source + "/" + s.Name,
			From: "active", To: "archived", Commit: out.Commit, Detail: s.Reason + "; " + how})
	}
	if err := e.Audit().Append(events...); err != nil {
		return fmt.Errorf("retired %d skills of %s, but the audit log was not written: %w", len(events), out.Source, err)
	}
	return nil
}

// RestoreSource brings the skill name, retired by curate --source, back
// into the postgres source source, in one transaction, and syncs. (A git
// source's retirement is undone by reverting its commit.)
func (e *Engine) RestoreSource(ctx context.Context, source, name string) (string, error) {
	src, ok := e.source(source)
	if !ok {
		return "", usageErrorf("source %q is not in the config", source)
	}
	r, err := e.open(src, "")
	if err != nil {
		return "", err
	}
	defer closeRepository(r)
	ar, ok := r.(repository.Archiver)
	if !ok || isRemote(r) {
		return "", fmt.Errorf("restore %s in source %s: a %s source's retirement is undone upstream (revert the curation commit)", name, source, src.Kind)
	}
	rev, err := ar.RestoreArchived(ctx, name, e.actor)
	if err != nil {
		return "", err
	}
	now := e.now()
	ev := curator.Event{TS: now, Actor: e.actor, Op: curator.OpRestored, Target: "marketplace:" + source + "/" + name,
		From: "archived", To: "active", Commit: string(rev), Detail: fmt.Sprintf("brought back into source %s at revision %s", source, rev)}
	if err := e.Audit().Append(ev); err != nil {
		return string(rev), err
	}
	_, err = e.Sync(ctx, SyncOptions{Locked: true, Move: []string{source}})
	if errors.Is(err, ErrPartial) || errors.Is(err, ErrFailed) {
		e.warnf("restored %s in source %s, but the sync after it failed: %v", name, source, err)
		err = nil
	}
	return string(rev), err
}

// idleText is an idle time in days, or hours under two days.
func idleText(d time.Duration) string {
	if d < 48*time.Hour {
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
