package fleet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/internal/usageerr"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// Workspace is one workspace's side of the fleet, as its config sets it:
// the store, this host's names, and the files that keep what a push
// sends. The root builds it from the config's fleet: section.
type Workspace struct {
	// Store says where the fleet store is.
	Store Config
	// Host and Environment are this host's id (HostID) and environment.
	Host, Environment string
	// Version is the skillsync version a heartbeat reports.
	Version string
	// Timeout bounds one push or query.
	Timeout time.Duration
	// MinHosts is how many hosts must have reported before curation
	// decides on fleet data.
	MinHosts int
	// SyncFile and PushedFile are skills/.fleet-sync.json and
	// skills/.fleet-pushed.json.
	SyncFile, PushedFile string
	// Warn receives what changes nothing (a push record not kept); nil
	// drops it.
	Warn func(string)

	// Local reads what a push sends of the workspace.
	Local func() Local
	// Source describes the configured source name; false when the config
	// has none of that name.
	Source func(name string) (SourceRef, bool)
	// Cached is what the workspace's cache holds of a source: its revision
	// and the names of its skills, archived ones included; ok is false
	// when the source is not synced yet.
	Cached func(source string) (base string, skills []string, ok bool, err error)
	// StaleAfter and ArchiveAfter are the curator's policy for a source
	// curation.
	StaleAfter, ArchiveAfter time.Duration
	// Actor is who makes the changes, for the audit log; Audit is the log.
	Actor string
	Audit *curator.Audit
	// Now is the moment a curation judges idle time at when it names none.
	Now func() time.Time
}

// SourceRef is a configured source as a source curation needs it.
type SourceRef struct {
	// Kind is the source's kind, for messages.
	Kind string
	// Direct publishes to the tracked branch (publish: direct).
	Direct bool
	// Open opens the source.
	Open func() (repository.Repository, error)
}

// Local is what a push reads of the workspace.
type Local struct {
	// Sources are the configured sources, in config order; Revisions
	// their revisions in the lock.
	Sources   []string
	Revisions map[string]string
	// Remotes are the configured sources' keys of where they are
	// (RemoteKey of the lock's URL and ref), for telling a fork that
	// keeps a source's name from the source.
	Remotes map[string]string
	// Skills counts the catalog's visible skills; an error leaves the
	// heartbeat's count at zero.
	Skills func(ctx context.Context) (int, error)
	// Usage reads the workspace's usage; a corrupt file
	// (curator.IsCorrupt) sends what could be read.
	Usage func() (*curator.Usage, error)
}

// Open opens the workspace's fleet store.
func (w *Workspace) Open(ctx context.Context) (*Store, error) {
	return Open(ctx, w.Store)
}

func (w *Workspace) warn(msg string) {
	if w.Warn != nil {
		w.Warn(msg)
	}
}

// Push sends this workspace's heartbeat and the usage records that
// changed since the last push the store acknowledged (PreparePush). When
// the store cannot be reached the usage stays local and goes with the
// next push (IsUnreachable tells that error apart). What it sends of the
// workspace is w.Local's. A sync never waits for a push.
func (w *Workspace) Push(ctx context.Context) (*PushReport, error) {
	local := w.Local()
	ctx, cancel := context.WithTimeout(ctx, w.Timeout)
	defer cancel()
	hb := NewHeartbeat(Heartbeat{Host: w.Host, Environment: w.Environment, Version: w.Version},
		w.SyncFile, local.Sources, local.Revisions)
	for i := range hb.Sources {
		hb.Sources[i].Remote = local.Remotes[hb.Sources[i].Source]
	}
	if n, err := local.Skills(ctx); err == nil {
		hb.Skills = n
	}
	u, err := local.Usage()
	if err != nil && !curator.IsCorrupt(err) {
		return nil, err
	}
	if u == nil {
		return nil, fmt.Errorf("fleet push: read usage: %w", err)
	}
	store, err := w.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	// The host's clock as the push starts: the store measures its skew
	// from it.
	hb.At = time.Now()
	return PreparePush(hb, u, w.PushedFile, store.Identity(), w.warn).Send(ctx, store)
}

// NoteSync leaves a sync's result for the next push (see the package
// function NoteSync): its error, nil when none, and each source's state,
// a source updated or unchanged being "ok". It never fails the sync: a
// file not written is a warning.
func (w *Workspace) NoteSync(syncErr error, sources []SourceState) {
	var text string
	if syncErr != nil {
		text = syncErr.Error()
	}
	for i, s := range sources {
		if s.Status == "updated" || s.Status == "unchanged" {
			sources[i].Status = "ok"
		}
	}
	if err := NoteSync(w.SyncFile, text, sources); err != nil {
		w.warn(fmt.Sprintf("fleet: record the sync's result: %v", err))
	}
}

// Status returns every host of the fleet with its sources. A skill name
// that is none is a *usageerr.UsageError (skillsync.UsageError).
func (w *Workspace) Status(ctx context.Context, opts StatusOptions) ([]HostStatus, error) {
	if opts.Skill != "" && !skill.ValidName(opts.Skill) {
		return nil, usageerr.Errorf("skill %q is not a valid skill name", opts.Skill)
	}
	store, err := w.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	return store.Status(ctx, opts)
}

// Usage returns the fleet's use of each copy in a window. A source the
// config does not have is a *usageerr.UsageError.
func (w *Workspace) Usage(ctx context.Context, opts UsageOptions) ([]SkillUsage, error) {
	if _, ok := w.Source(opts.Source); opts.Source != "" && !ok {
		return nil, usageerr.Errorf("source %q is not in the config", opts.Source)
	}
	store, err := w.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	return store.Usage(ctx, opts)
}

// LastUses is the package function LastUses on the workspace's store,
// over the window stale_after before now, told by this machine's clock:
// the fleet's uses are dated by the store server's, and the curator
// judges idle time by this machine's, so a clock of this machine that
// runs off the server's (a minute or more) moves the window and the last
// uses by as much. Else a host whose clock ran a day ahead would take
// every skill for a day idler than the fleet left it.
func (w *Workspace) LastUses(ctx context.Context, now time.Time, staleAfter time.Duration) (map[curator.Copy]time.Time, string, error) {
	ctx, cancel := context.WithTimeout(ctx, w.Timeout)
	defer cancel()
	store, err := w.Open(ctx)
	if err != nil {
		return nil, "", err
	}
	defer store.Close()
	server, err := store.ServerTime(ctx)
	if err != nil {
		return nil, "", err
	}
	skew := correction(store.now().Sub(server))
	last, wait, err := LastUses(ctx, store, now.Add(-staleAfter).Add(-skew), staleAfter, w.MinHosts)
	for c, t := range last {
		last[c] = t.Add(skew)
	}
	return last, wait, err
}

// SourceCurateOptions change a curation of a marketplace source itself.
type SourceCurateOptions struct {
	// Now is the moment idle time is judged at; zero means w.Now().
	Now time.Time
	// DryRun plans and changes nothing.
	DryRun bool
}

// CurateSource retires, upstream, the skills of the configured
// marketplace source name that the whole fleet left idle past
// archive_after and no host pins: the package function CurateSource on
// the workspace's store, with the workspace's policy and what its cache
// holds of the source. A source the config does not have is a
// *usageerr.UsageError.
func (w *Workspace) CurateSource(ctx context.Context, name string, opts SourceCurateOptions) (*SourceCuration, error) {
	src, ok := w.Source(name)
	if !ok {
		return nil, usageerr.Errorf("source %q is not in the config", name)
	}
	base, skills, ok, err := w.Cached(name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("curate source " + name + ": it is not synced yet: run skillsync sync")
	}
	// Idle time is judged by the store's clock unless --now names a
	// time (CurateSource), not by this machine's, which may run ahead.
	clock, now := w.Now(), opts.Now
	store, err := w.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	return CurateSource(ctx, store, SourceCurationRequest{Source: name, Kind: src.Kind, Skills: skills, Base: base, Direct: src.Direct,
		StaleAfter: w.StaleAfter, ArchiveAfter: w.ArchiveAfter, MinHosts: w.MinHosts, Now: now, Clock: clock, DryRun: opts.DryRun, Actor: w.Actor,
		Audit: w.Audit, Open: src.Open})
}

// RestoreSource brings the skill name, retired by a source curation, back
// into the configured source src, named source (one that archives in
// place: a database), and records it in audit. Any other source is a
// *usageerr.UsageError: a git source's retirement is a commit, undone by
// reverting it upstream, and a folder's is the user's own to undo.
func RestoreSource(ctx context.Context, src SourceRef, source, name, actor string, audit *curator.Audit, now time.Time) (repository.Revision, error) {
	r, err := src.Open()
	if err != nil {
		return "", err
	}
	defer repository.Close(r)
	_, remote := r.(repository.Fetcher)
	kind := src.Kind
	ar, ok := r.(repository.Archiver)
	switch {
	case remote:
		return "", usageerr.Errorf("restore %s in source %s: --source brings skills back into postgres sources; a %s source's retirement is a commit upstream: revert it there, then run skillsync sync", name, source, kind)
	case !ok:
		return "", usageerr.Errorf("restore %s in source %s: --source brings skills back into postgres sources, and %s is a %s source; without --source, restore brings back an archived copy in this workspace", name, source, source, kind)
	}
	rev, err := ar.RestoreArchived(ctx, name, actor)
	if err != nil {
		return "", err
	}
	ev := curator.Event{TS: now, Actor: actor, Op: curator.OpRestored, Target: "marketplace:" + source + "/" + name,
		From: "archived", To: "active", Commit: string(rev), Detail: fmt.Sprintf("brought back into source %s at revision %s", source, rev)}
	return rev, audit.Append(ev)
}
