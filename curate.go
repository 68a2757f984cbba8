package skillsync

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/layering"
)

// layerDirs returns the local layers whose skills curation moves into
// their .archive/: the workspace's and the user's.
func (e *Engine) layerDirs() []curator.LayerDir {
	var out []curator.LayerDir
	for _, l := range e.localLayers() {
		switch l.layer {
		case layering.Workspace:
			out = append(out, curator.LayerDir{Layer: l.layer, Dir: l.dir})
		case layering.User:
			out = append(out, curator.LayerDir{Layer: l.layer, Owner: e.cfg.User, Dir: l.dir})
		}
	}
	return out
}

// CurateOptions change a curation.
type CurateOptions struct {
	// Now is the moment curation judges idle time at; zero means now.
	Now time.Time
	// DryRun plans and changes nothing.
	DryRun bool
	// Force curates even while a skill was used within min_idle, and
	// archives in a workspace that never recorded a use.
	Force bool
}

// Curate marks idle copies stale, archives long-idle ones, and makes
// stale copies that were used since active again. With fleet: set, a
// marketplace copy is judged by its last use on any host of the fleet,
// and curation refuses, saying why, while fewer than curator.min_hosts
// hosts reported within stale_after. Archiving a local skill
// moves its directory to <layer dir>/.archive/<name>-<stamp>/; archiving a
// marketplace skill takes it out of the cache and the targets.
func (e *Engine) Curate(ctx context.Context, opts CurateOptions) (curator.Plan, error) {
	now := opts.Now
	if now.IsZero() {
		now = e.now()
	}
	cat, err := e.Catalog(ctx)
	if err != nil {
		return curator.Plan{}, err
	}
	if !opts.DryRun {
		// Skills never seen before are first seen now: their idle time
		// starts here.
		if err := e.seen(ctx, cat, now, nil); err != nil {
			return curator.Plan{}, err
		}
	}
	candidates := curator.CandidatesOf(cat.Winners, e.copyOf, e.layerDirs())
	elsewhere, skipped, err := e.fleetLastUses(ctx, now)
	if err != nil {
		return curator.Plan{}, err
	}
	if skipped != "" {
		return curator.Plan{Changes: []curator.Change{}, Skills: []curator.Checked{}, Skipped: skipped}, nil
	}
	store := e.Usage()
	store.Resolve = e.resolverFrom(cat)
	plan, err := store.Curate(ctx, curator.Curation{Policy: curatorPolicy(e.cfg.Curator), Candidates: candidates, Now: now,
		Force: opts.Force, DryRun: opts.DryRun, Actor: e.actor, Elsewhere: elsewhere})
	if err != nil || opts.DryRun {
		return plan, err
	}
	for _, c := range plan.Changes {
		if c.To == curator.Archived && c.Copy.Layer == layering.Marketplace {
			if err := e.resync(ctx); err != nil {
				return plan, fmt.Errorf("take archived skills out of the cache: %w", err)
			}
			break
		}
	}
	return plan, nil
}

// ArchivedCopy is a local skill in its layer's .archive directory.
type ArchivedCopy = curator.ArchivedCopy

// ArchivedCopies lists the archived local skills of the workspace and
// user layers, newest first.
func (e *Engine) ArchivedCopies() []ArchivedCopy {
	return curator.ArchivedCopies(e.layerDirs()...)
}

// Restore makes an archived skill active again: a local skill's newest
// archived copy moves back, and a marketplace skill is materialized again
// at once. It refuses, saying why, when a skill of that name now stands
// where the copy would go.
func (e *Engine) Restore(ctx context.Context, name string) (string, error) {
	key := layering.Key(name)
	for _, c := range e.ArchivedCopies() {
		if layering.Key(c.Name) != key {
			continue
		}
		if err := c.CanRestore(); err != nil {
			return "", err
		}
		if w, _, err := e.Lookup(ctx, c.Name); err == nil && w.Layer >= c.Layer {
			return "", fmt.Errorf("restore %s: a skill of that name now comes from %s (%s layer); the archived copy stays in %s", c.Name, w.Source, w.Layer, c.Dir)
		}
		dst, err := c.Restore()
		if err != nil {
			return "", err
		}
		return c.Name, e.Usage().MarkRestored(ctx, c.Copy, e.actor, "moved back from "+c.Dir+" to "+dst, e.now())
	}
	u, err := e.Usage().Load()
	if err != nil {
		return "", err
	}
	for _, c := range u.Archived(name) {
		if c.Layer != layering.Marketplace {
			continue
		}
		if err := e.Usage().MarkRestored(ctx, c, e.actor, "materialized again", e.now()); err != nil {
			return c.Name, err
		}
		return c.Name, e.resync(ctx)
	}
	return "", fmt.Errorf("restore %s: no archived skill of that name", name)
}

// resync materializes the cache again at the locked revisions without any
// network, after the curator changed what is archived. A source that
// cannot be read offline keeps its files, which is no failure of the
// curation.
func (e *Engine) resync(ctx context.Context) error {
	_, err := e.Sync(ctx, SyncOptions{Offline: true, Locked: true})
	if errors.Is(err, ErrPartial) || errors.Is(err, ErrFailed) {
		return nil
	}
	return err
}
