package skillsync

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/fleet"
	"github.com/skillsync/skillsync/internal/jsonfile"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/lock"
	"github.com/skillsync/skillsync/skill"
)

// ErrNoFleet is returned by the fleet methods when the config has no
// fleet: section.
var ErrNoFleet = errors.New("the config has no fleet: section: add one naming the fleet's PostgreSQL (see docs/fleet.md)")

// noFleet is ErrNoFleet as the caller's mistake.
func noFleet() error { return &UsageError{Err: ErrNoFleet} }

// WithVersion names the skillsync version a fleet heartbeat reports.
func WithVersion(v string) Option {
	return func(e *Engine) { e.version = v }
}

// HostID is this host's id in the fleet and for staged rollout: fleet.host
// from the config, else the host name and a short hash of the workspace
// path, so two workspaces on one machine are two hosts.
func (e *Engine) HostID() string {
	if f := e.cfg.Fleet; f != nil && f.Host != "" {
		return f.Host
	}
	name, err := os.Hostname()
	if err != nil || !fleet.ValidHostID(name) {
		name = "host"
	}
	sum := sha256.Sum256([]byte(e.layout.Root))
	return name + "-" + hex.EncodeToString(sum[:4])
}

// Environment is this host's environment for staged rollout ("" when the
// config names none).
func (e *Engine) Environment() string {
	if f := e.cfg.Fleet; f != nil {
		return f.Environment
	}
	return ""
}

// holdBack takes out of inputs the skills this host does not take by
// their staged rollout (metadata.rollout, metadata.environments) and
// returns them with the reason.
func (e *Engine) holdBack(inputs []layering.Input) []layering.Held {
	var held []layering.Held
	host, env := "", ""
	for i := range inputs {
		in := &inputs[i]
		kept := in.Skills[:0:0]
		for _, s := range in.Skills {
			if len(s.Metadata) == 0 {
				kept = append(kept, s)
				continue
			}
			if host == "" {
				host, env = e.HostID(), e.Environment()
			}
			reason := fleet.HeldBack(host, env, s.Name, s.Metadata)
			if reason == "" {
				kept = append(kept, s)
				continue
			}
			en := layering.Entry{Skill: s, Layer: in.Layer, Source: in.Source, Revision: in.Revision}
			if in.Dir != nil {
				en.Dir = in.Dir(s)
			}
			held = append(held, layering.Held{Entry: en, Reason: reason})
		}
		if len(kept) != len(in.Skills) {
			in.Skills = kept
		}
	}
	slices.SortFunc(held, func(a, b layering.Held) int {
		if c := cmpString(layering.Key(a.Skill.Name), layering.Key(b.Skill.Name)); c != 0 {
			return c
		}
		return int(a.Layer) - int(b.Layer)
	})
	return held
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
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
type FleetPushReport struct {
	Host string `json:"host"`
	fleet.PushResult
	// Sent is how many usage records went: the ones changed since the
	// last acknowledged push.
	Sent int `json:"sent"`
}

// FleetPush sends this workspace's heartbeat and the usage records that
// changed since the last push the store acknowledged. Counters are sent
// whole, so a push repeated after a lost answer counts nothing twice. When
// the store cannot be reached the usage stays local and goes with the next
// push (fleet.IsUnreachable tells that error apart). A sync never waits for
// a push.
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
	pushed := &pushedFile{}
	if err := jsonfile.Read(e.layout.FleetPushedFile(), pushed); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			e.warnf("%v: sending every usage record", err)
		}
		pushed = &pushedFile{}
	}
	if pushed.Host != hb.Host {
		// Another host id: the store has none of this usage under it.
		pushed = &pushedFile{}
	}
	var recs []fleet.Record
	next := map[string]pushedRecord{}
	for c, su := range u.Skills {
		if su == nil {
			continue
		}
		r := fleet.Record{Copy: c, Uses: int64(su.UseCount), Views: int64(su.ViewCount), State: string(su.State), Pinned: su.Pinned}
		if su.LastUsedAt != nil {
			r.LastUsedAt = *su.LastUsedAt
		}
		if su.LastViewedAt != nil {
			r.LastViewedAt = *su.LastViewedAt
		}
		p := pushedRecord{Uses: r.Uses, Views: r.Views, LastUsed: r.LastUsedAt.Unix(), LastViewed: r.LastViewedAt.Unix(), State: r.State, Pinned: r.Pinned}
		next[c.String()] = p
		if old, ok := pushed.Records[c.String()]; ok && old == p {
			continue
		}
		recs = append(recs, r)
	}
	slices.SortFunc(recs, func(a, b fleet.Record) int { return cmpString(a.Copy.String(), b.Copy.String()) })
	store, err := e.openFleet(ctx)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	res, err := store.Push(ctx, hb, recs)
	if err != nil {
		return nil, err
	}
	for _, s := range res.Skipped {
		e.warnf("fleet push: skipped %s", s)
	}
	if err := jsonfile.Write(e.layout.FleetPushedFile(), &pushedFile{Version: 1, Host: hb.Host, Records: next}, 0o644); err != nil {
		// The store has the usage; the next push sends it again, which
		// counts nothing twice.
		e.warnf("fleet push: remember what was pushed: %v", err)
	}
	return &FleetPushReport{Host: hb.Host, PushResult: res, Sent: len(recs)}, nil
}

// heartbeat gathers what this host says of itself: its sources' revisions
// from the lock and their last sync results from the last sync.
func (e *Engine) heartbeat(ctx context.Context) fleet.Heartbeat {
	hb := fleet.Heartbeat{Host: e.HostID(), Environment: e.Environment(), Version: e.version, At: time.Now()}
	last := &fleetSyncFile{}
	if err := jsonfile.Read(e.layout.FleetSyncFile(), last); err != nil {
		last = &fleetSyncFile{}
	}
	hb.LastError = last.Error
	results := map[string]fleet.SourceState{}
	for _, s := range last.Sources {
		results[s.Source] = s
	}
	locked, _, err := lock.Read(e.layout.LockFile(), e.kinds)
	if err != nil {
		locked = lock.New()
	}
	for _, s := range e.cfg.Sources {
		st := results[s.Name]
		st.Source = s.Name
		if rec, ok := locked.Sources[s.Name]; ok && rec.Revision != "" {
			st.Revision = rec.Revision
		}
		if st.Status == "" {
			st.Status = "unknown"
		}
		hb.Sources = append(hb.Sources, st)
	}
	if cat, err := e.Catalog(ctx); err == nil {
		hb.Skills = len(cat.Visible())
	}
	return hb
}

// pushedFile is skills/.fleet-pushed.json: per copy, what the store has
// acknowledged.
type pushedFile struct {
	Version int                     `json:"version"`
	Host    string                  `json:"host"`
	Records map[string]pushedRecord `json:"records"`
}

type pushedRecord struct {
	Uses       int64  `json:"u"`
	Views      int64  `json:"v"`
	LastUsed   int64  `json:"lu"`
	LastViewed int64  `json:"lv"`
	State      string `json:"s,omitempty"`
	Pinned     bool   `json:"p,omitempty"`
}

func (p *pushedFile) Validate() error { return jsonfile.CheckVersion(p.Version, 1) }

// fleetSyncFile is skills/.fleet-sync.json: the last sync's result.
type fleetSyncFile struct {
	Version int                 `json:"version"`
	Error   string              `json:"error"`
	Sources []fleet.SourceState `json:"sources"`
}

func (f *fleetSyncFile) Validate() error { return jsonfile.CheckVersion(f.Version, 1) }

// noteSync leaves a sync's result for the next fleet push, when the config
// has a fleet. It never fails the sync.
func (e *Engine) noteSync(report *SyncReport, err error) {
	if e.cfg.Fleet == nil || report == nil && err == nil {
		return
	}
	// No time in it: a sync with the same outcome writes nothing.
	out := fleetSyncFile{Version: 1}
	if err != nil {
		out.Error = err.Error()
	}
	if report != nil {
		for _, s := range report.Sources {
			status := string(s.Status)
			if s.Status == StatusUpdated || s.Status == StatusUnchanged {
				status = "ok"
			}
			out.Sources = append(out.Sources, fleet.SourceState{Source: s.Source, Revision: s.Revision, Status: status, Error: s.Error})
		}
	}
	if werr := jsonfile.Write(e.layout.FleetSyncFile(), &out, 0o644); werr != nil {
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
// must wait (too few hosts reported within stale_after).
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
	since := now.Add(-e.cfg.Curator.StaleAfter)
	hosts, err := store.Reporting(ctx, since)
	if err != nil {
		return nil, "", err
	}
	if hosts < f.MinHosts {
		return nil, fmt.Sprintf("fleet: %d hosts reported within stale_after %s, fewer than curator.min_hosts %d: curation on fleet data waits",
			hosts, e.cfg.Curator.StaleAfter, f.MinHosts), nil
	}
	list, err := store.Usage(ctx, fleet.UsageOptions{Since: since})
	if err != nil {
		return nil, "", err
	}
	out := map[curator.Copy]time.Time{}
	for _, u := range list {
		if u.Copy.Layer == layering.Marketplace && u.LastUsedAt != nil {
			out[u.Copy] = *u.LastUsedAt
		}
	}
	return out, "", nil
}
