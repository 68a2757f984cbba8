package skillsync

import (
	"cmp"
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
func (e *Engine) fleetConfig() config.Fleet { return *cmp.Or(e.cfg.Fleet, &config.Fleet{}) }

// Fleet returns the workspace's side of the fleet as the config sets it,
// or an *UsageError wrapping ErrNoFleet when it has no fleet: section:
// push, status, usage and a source's curation are its methods.
func (e *Engine) Fleet() (*fleet.Workspace, error) {
	f := e.cfg.Fleet
	if f == nil {
		return nil, &UsageError{Err: ErrNoFleet}
	}
	return &fleet.Workspace{Store: fleet.Config{DSNEnv: f.Postgres, DSNFile: f.DSNFile, Schema: f.Schema, Create: f.Create, Env: e.env,
		Timeout: f.Timeout, Warn: e.warn}, Host: e.HostID(), Environment: f.Environment, Version: e.version, Timeout: f.Timeout,
		MinHosts: f.MinHosts, SyncFile: e.layout.FleetSyncFile(), PushedFile: e.layout.FleetPushedFile(), Warn: e.warn,
		Local: e.fleetLocal, Source: e.fleetSource, Cached: e.cached, StaleAfter: e.cfg.Curator.StaleAfter,
		ArchiveAfter: e.cfg.Curator.ArchiveAfter, Actor: e.actor, Audit: e.Audit(), Now: e.now}, nil
}

// fleetLocal is what a fleet push sends of the workspace.
func (e *Engine) fleetLocal() fleet.Local {
	locked, _, err := lock.Read(e.layout.LockFile(), e.kinds)
	if err != nil {
		locked = lock.New()
	}
	revisions, remotes := map[string]string{}, map[string]string{}
	for name, rec := range locked.Sources {
		revisions[name], remotes[name] = rec.Revision, fleet.RemoteKey(rec.URL, rec.Ref)
	}
	return fleet.Local{Sources: sourceNames(e.cfg.Sources), Revisions: revisions, Remotes: remotes, Usage: e.Usage().Load,
		Skills: func(ctx context.Context) (int, error) {
			cat, err := e.Catalog(ctx)
			if err != nil {
				return 0, err
			}
			return len(cat.Visible()), nil
		}}
}

// fleetSource is the configured source name as a source curation needs it.
func (e *Engine) fleetSource(name string) (fleet.SourceRef, bool) {
	src, ok := e.source(name)
	return fleet.SourceRef{Kind: string(src.Kind), Direct: publishesDirect(src),
		Open: func() (repository.Repository, error) { return e.open(src, "") }}, ok
}

// cached is what the cache holds of source: its revision and its skills'
// names, archived ones included, sorted.
func (e *Engine) cached(source string) (string, []string, bool, error) {
	m, err := materialize.ReadManifest(e.layout.CacheDir())
	if err != nil {
		return "", nil, false, err
	}
	rec, ok := m.Sources[source]
	if !ok {
		return "", nil, false, nil
	}
	return rec.Revision, slices.Sorted(slices.Values(append(slices.Collect(maps.Keys(rec.Skills)), rec.Excluded...))), true, nil
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

// fleetLastUses is fleet.LastUses, with fleet: set and the marketplace
// layer curated.
func (e *Engine) fleetLastUses(ctx context.Context, now time.Time) (map[curator.Copy]time.Time, string, error) {
	w, err := e.Fleet()
	if err != nil || !slices.Contains(e.cfg.Curator.Layers, layering.Marketplace.String()) {
		return nil, "", nil
	}
	return w.LastUses(ctx, now, e.cfg.Curator.StaleAfter)
}

// RestoreSource brings the skill name, retired by curate --source, back
// into the postgres source source and syncs (fleet.RestoreSource).
func (e *Engine) RestoreSource(ctx context.Context, source, name string) (string, error) {
	src, ok := e.fleetSource(source)
	if !ok {
		return "", usageErrorf("source %q is not in the config", source)
	}
	rev, err := fleet.RestoreSource(ctx, src, source, name, e.actor, e.Audit(), e.now())
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
