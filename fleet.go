package skillsync

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/fleet"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/lock"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// The fleet's policy (host ids, staged rollout, push bookkeeping, the
// curation of a source on fleet data) is package fleet's; these wire it
// to the workspace.

// ErrNoFleet is returned by the fleet methods when the config has no
// fleet: section.
var ErrNoFleet = errors.New("the config has no fleet: section: add one naming the fleet's PostgreSQL (see docs/fleet.md)")

// noFleet is ErrNoFleet as the caller's mistake.
func noFleet() error { return &UsageError{Err: ErrNoFleet} }

// WithVersion names the skillsync version a fleet heartbeat reports.
func WithVersion(v string) Option {
	return func(e *Engine) { e.version = v }
}

// HostID is this host's id in the fleet and for staged rollout
// (fleet.HostID): fleet.host from the config, else one made from the
// host name and the workspace path.
func (e *Engine) HostID() string {
	host := ""
	if f := e.cfg.Fleet; f != nil {
		host = f.Host
	}
	return fleet.HostID(host, e.layout.Root)
}

// Environment is this host's environment for staged rollout ("" when the
// config names none).
func (e *Engine) Environment() string {
	if f := e.cfg.Fleet; f != nil {
		return f.Environment
	}
	return ""
}

// openFleet opens the fleet store of the config.
func (e *Engine) openFleet(ctx context.Context) (*fleet.Store, error) {
	f := e.cfg.Fleet
	if f == nil {
		return nil, noFleet()
	}
	return fleet.Open(ctx, fleet.Config{DSNEnv: f.Postgres, DSNFile: f.DSNFile, Schema: f.Schema, Create: f.Create, Env: e.env,
		Timeout: f.Timeout, Warn: e.warn})
}

// FleetPushReport is what a push sent.
type FleetPushReport = fleet.PushReport

// FleetPush sends this workspace's heartbeat and the usage records that
// changed since the last push the store acknowledged (fleet.PreparePush).
// When the store cannot be reached the usage stays local and goes with
// the next push (fleet.IsUnreachable tells that error apart). A sync
// never waits for a push.
func (e *Engine) FleetPush(ctx context.Context) (*FleetPushReport, error) {
	f := e.cfg.Fleet
	if f == nil {
		return nil, noFleet()
	}
	ctx, cancel := context.WithTimeout(ctx, f.Timeout)
	defer cancel()
	hb := e.heartbeat(ctx)
	u, err := e.Usage().Load()
	if err != nil && !curator.IsCorrupt(err) {
		return nil, err
	}
	if u == nil {
		return nil, fmt.Errorf("fleet push: read usage: %w", err)
	}
	push := fleet.PreparePush(hb, u, e.layout.FleetPushedFile(), func(msg string) { e.warnf("%s", msg) })
	store, err := e.openFleet(ctx)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	return push.Send(ctx, store)
}

// heartbeat gathers what this host says of itself: its sources'
// revisions from the lock and their results from the last sync.
func (e *Engine) heartbeat(ctx context.Context) fleet.Heartbeat {
	locked, _, err := lock.Read(e.layout.LockFile(), e.kinds)
	if err != nil {
		locked = lock.New()
	}
	revisions := map[string]string{}
	for name, rec := range locked.Sources {
		revisions[name] = rec.Revision
	}
	hb := fleet.NewHeartbeat(fleet.Heartbeat{Host: e.HostID(), Environment: e.Environment(), Version: e.version, At: time.Now()},
		e.layout.FleetSyncFile(), sourceNames(e.cfg.Sources), revisions)
	if cat, err := e.Catalog(ctx); err == nil {
		hb.Skills = len(cat.Visible())
	}
	return hb
}

// noteSync leaves a sync's result for the next fleet push, when the config
// has a fleet. It never fails the sync.
func (e *Engine) noteSync(report *SyncReport, err error) {
	if e.cfg.Fleet == nil || report == nil && err == nil {
		return
	}
	var errText string
	if err != nil {
		errText = err.Error()
	}
	var states []fleet.SourceState
	if report != nil {
		for _, s := range report.Sources {
			status := string(s.Status)
			if s.Status == StatusUpdated || s.Status == StatusUnchanged {
				status = "ok"
			}
			states = append(states, fleet.SourceState{Source: s.Source, Revision: s.Revision, Status: status, Error: s.Error})
		}
	}
	if werr := fleet.NoteSync(e.layout.FleetSyncFile(), errText, states); werr != nil {
		e.warnf("fleet: record the sync's result: %v", werr)
	}
}

// FleetStatus returns every host of the fleet with its sources.
func (e *Engine) FleetStatus(ctx context.Context, opts fleet.StatusOptions) ([]fleet.HostStatus, error) {
	if opts.Skill != "" && !skill.ValidName(opts.Skill) {
		return nil, usageErrorf("skill %q is not a valid skill name", opts.Skill)
	}
	store, err := e.openFleet(ctx)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	return store.Status(ctx, opts)
}

// FleetUsage returns the fleet's use of each copy in a window.
func (e *Engine) FleetUsage(ctx context.Context, opts fleet.UsageOptions) ([]fleet.SkillUsage, error) {
	if opts.Source != "" {
		if _, ok := e.source(opts.Source); !ok {
			return nil, usageErrorf("source %q is not in the config", opts.Source)
		}
	}
	store, err := e.openFleet(ctx)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	return store.Usage(ctx, opts)
}

// fleetLastUses returns, with fleet: set and the marketplace layer
// curated, the fleet's last use of each marketplace copy; or why curation
// must wait (fleet.LastUses).
func (e *Engine) fleetLastUses(ctx context.Context, now time.Time) (map[curator.Copy]time.Time, string, error) {
	f := e.cfg.Fleet
	if f == nil || !slices.Contains(e.cfg.Curator.Layers, layering.Marketplace.String()) {
		return nil, "", nil
	}
	ctx, cancel := context.WithTimeout(ctx, f.Timeout)
	defer cancel()
	store, err := e.openFleet(ctx)
	if err != nil {
		return nil, "", err
	}
	defer store.Close()
	return fleet.LastUses(ctx, store, now.Add(-e.cfg.Curator.StaleAfter), e.cfg.Curator.StaleAfter, f.MinHosts)
}

// SourceCurateOptions change a curation of a marketplace source itself.
type SourceCurateOptions struct {
	// Now is the moment idle time is judged at; zero means now.
	Now time.Time
	// DryRun plans and changes nothing.
	DryRun bool
}

// RetiredSkill is a skill a source curation retires (or would).
type RetiredSkill = fleet.RetiredSkill

// SourceCuration is what a curation of a marketplace source did.
type SourceCuration = fleet.SourceCuration

// CurateSource retires, upstream, the skills of the marketplace source
// name that the whole fleet left idle past curator.archive_after and no
// host pins: the team's scheduled job (fleet.CurateSource says how). It
// refuses, saying why, while fewer than curator.min_hosts hosts reported
// within stale_after.
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
	m, err := materialize.ReadManifest(e.layout.CacheDir())
	if err != nil {
		return nil, err
	}
	rec, ok := m.Sources[name]
	if !ok {
		return nil, fmt.Errorf("curate source %s: it is not synced yet: run skillsync sync", name)
	}
	names := append(slices.Sorted(maps.Keys(rec.Skills)), rec.Excluded...)
	slices.Sort(names)
	store, err := e.openFleet(ctx)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	policy := e.cfg.Curator
	return fleet.CurateSource(ctx, store, fleet.SourceCurationRequest{Source: name, Kind: string(src.Kind), Skills: names,
		Base: rec.Revision, Direct: publishesDirect(src), StaleAfter: policy.StaleAfter, ArchiveAfter: policy.ArchiveAfter,
		MinHosts: f.MinHosts, Now: now, DryRun: opts.DryRun, Actor: e.actor, Audit: e.Audit(),
		Open: func() (repository.Repository, error) { return e.open(src, "") }})
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
