package skillsync

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/fleet"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/lock"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// ErrNoFleet is returned by the fleet methods when the config has no
// fleet: section.
var ErrNoFleet = errors.New("the config has no fleet: section: add one naming the fleet's PostgreSQL (see docs/fleet.md)")

// WithVersion names the skillsync version a fleet heartbeat reports.
func WithVersion(v string) Option {
	return func(e *Engine) { e.version = v }
}

// HostID is this host's id in the fleet and for staged rollout
// (fleet.HostID of fleet.host in the config).
func (e *Engine) HostID() string { return fleet.HostID(e.fleetConfig().Host, e.layout.Root) }

// Environment is this host's environment for staged rollout ("" when the
// config names none).
func (e *Engine) Environment() string { return e.fleetConfig().Environment }

// fleetConfig is the config's fleet: section, the zero one when none.
func (e *Engine) fleetConfig() config.Fleet {
	if f := e.cfg.Fleet; f != nil {
		return *f
	}
	return config.Fleet{}
}

// Fleet returns the workspace's side of the fleet as the config sets it,
// or an *UsageError wrapping ErrNoFleet when it has no fleet: section.
func (e *Engine) Fleet() (*fleet.Workspace, error) {
	f := e.cfg.Fleet
	if f == nil {
		return nil, &UsageError{Err: ErrNoFleet}
	}
	return &fleet.Workspace{Store: fleet.Config{DSNEnv: f.Postgres, DSNFile: f.DSNFile, Schema: f.Schema, Create: f.Create, Env: e.env,
		Timeout: f.Timeout, Warn: e.warn}, Host: e.HostID(), Environment: f.Environment, Version: e.version, Timeout: f.Timeout,
		MinHosts: f.MinHosts, SyncFile: e.layout.FleetSyncFile(), PushedFile: e.layout.FleetPushedFile(), Warn: e.warn}, nil
}

// FleetPushReport is what a push sent.
type FleetPushReport = fleet.PushReport

// FleetPush sends this workspace's heartbeat and changed usage records
// (fleet.Workspace.Push). A sync never waits for a push.
func (e *Engine) FleetPush(ctx context.Context) (*FleetPushReport, error) {
	w, err := e.Fleet()
	if err != nil {
		return nil, err
	}
	locked, _, err := lock.Read(e.layout.LockFile(), e.kinds)
	if err != nil {
		locked = lock.New()
	}
	revisions := map[string]string{}
	for name, rec := range locked.Sources {
		revisions[name] = rec.Revision
	}
	return w.Push(ctx, fleet.Local{Sources: sourceNames(e.cfg.Sources), Revisions: revisions, Usage: e.Usage().Load,
		Skills: func(ctx context.Context) (int, error) {
			cat, err := e.Catalog(ctx)
			if err != nil {
				return 0, err
			}
			return len(cat.Visible()), nil
		}})
}

// noteSync leaves a sync's result for the next fleet push, when the config
// has a fleet (fleet.Workspace.NoteSync). It never fails the sync.
func (e *Engine) noteSync(report *SyncReport, err error) {
	w, ferr := e.Fleet()
	if ferr != nil || report == nil && err == nil {
		return
	}
	var states []fleet.SourceState
	if report != nil {
		for _, s := range report.Sources {
			states = append(states, fleet.SourceState{Source: s.Source, Revision: s.Revision, Status: string(s.Status), Error: s.Error})
		}
	}
	w.NoteSync(err, states)
}

// FleetStatus returns every host of the fleet with its sources.
func (e *Engine) FleetStatus(ctx context.Context, opts fleet.StatusOptions) ([]fleet.HostStatus, error) {
	if opts.Skill != "" && !skill.ValidName(opts.Skill) {
		return nil, usageErrorf("skill %q is not a valid skill name", opts.Skill)
	}
	w, err := e.Fleet()
	if err != nil {
		return nil, err
	}
	return w.Status(ctx, opts)
}

// FleetUsage returns the fleet's use of each copy in a window.
func (e *Engine) FleetUsage(ctx context.Context, opts fleet.UsageOptions) ([]fleet.SkillUsage, error) {
	if _, ok := e.source(opts.Source); opts.Source != "" && !ok {
		return nil, usageErrorf("source %q is not in the config", opts.Source)
	}
	w, err := e.Fleet()
	if err != nil {
		return nil, err
	}
	return w.Usage(ctx, opts)
}

// fleetLastUses is fleet.LastUses, with fleet: set and the marketplace
// layer curated.
func (e *Engine) fleetLastUses(ctx context.Context, now time.Time) (map[curator.Copy]time.Time, string, error) {
	w, err := e.Fleet()
	if err != nil || !slices.Contains(e.cfg.Curator.Layers, layering.Marketplace.String()) {
		return nil, "", nil
	}
	return w.LastUses(ctx, now, e.cfg.Curator.StaleAfter)
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
// host pins (fleet.CurateSource).
func (e *Engine) CurateSource(ctx context.Context, name string, opts SourceCurateOptions) (*SourceCuration, error) {
	w, err := e.Fleet()
	if err != nil {
		return nil, err
	}
	src, ok := e.source(name)
	if !ok {
		return nil, usageErrorf("source %q is not in the config", name)
	}
	m, err := materialize.ReadManifest(e.layout.CacheDir())
	if err != nil {
		return nil, err
	}
	rec, ok := m.Sources[name]
	if !ok {
		return nil, errors.New("curate source " + name + ": it is not synced yet: run skillsync sync")
	}
	names := slices.Sorted(slices.Values(append(slices.Collect(maps.Keys(rec.Skills)), rec.Excluded...)))
	policy := e.cfg.Curator
	return w.CurateSource(ctx, fleet.SourceCurationRequest{Source: name, Kind: string(src.Kind), Skills: names,
		Base: rec.Revision, Direct: publishesDirect(src), StaleAfter: policy.StaleAfter, ArchiveAfter: policy.ArchiveAfter,
		Now: cmpTime(opts.Now, e.now()), DryRun: opts.DryRun, Actor: e.actor, Audit: e.Audit(),
		Open: func() (repository.Repository, error) { return e.open(src, "") }})
}

// RestoreSource brings the skill name, retired by curate --source, back
// into the postgres source source and syncs (fleet.RestoreSource).
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
	rev, err := fleet.RestoreSource(ctx, r, isRemote(r), string(src.Kind), source, name, e.actor, e.Audit(), e.now())
	if err != nil {
		return string(rev), err
	}
	_, err = e.Sync(ctx, SyncOptions{Locked: true, Move: []string{source}})
	if errors.Is(err, ErrPartial) || errors.Is(err, ErrFailed) {
		e.warnf("restored %s in source %s, but the sync after it failed: %v", name, source, err)
		err = nil
	}
	return string(rev), err
}

// cmpTime is t, or def when t is zero.
func cmpTime(t, def time.Time) time.Time {
	if t.IsZero() {
		return def
	}
	return t
}
