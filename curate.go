package skillsync

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/layering"
)

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
// stale copies that were used since active again (curator.Job.Run).
// With fleet: set, a marketplace copy is judged by its last use on any
// host of the fleet, and curation refuses, saying why, while fewer than
// curator.min_hosts hosts reported within stale_after. Archiving a local
// skill moves its directory to <layer dir>/.archive/<name>-<stamp>/;
// archiving a marketplace skill takes it out of the cache and the targets.
func (e *Engine) Curate(ctx context.Context, opts CurateOptions) (curator.Plan, error) {
	v := e.view()
	job := curator.Job{Catalog: v.Read, CopyOf: v.CopyOf, Store: v.Store, Dirs: v.LayerDirs(), Elsewhere: e.fleetLastUses, Resync: e.resync,
		Seen: func(ctx context.Context, cat *layering.Catalog, now time.Time) error {
			return e.seen(ctx, cat, now, nil)
		}}
	return job.Run(ctx, curator.Curation{Policy: curatorPolicy(e.cfg.Curator), Now: opts.Now, Clock: e.now(), Force: opts.Force,
		DryRun: opts.DryRun, Actor: e.actor})
}

// ArchivedCopy is a local skill in its layer's .archive directory.
type ArchivedCopy = curator.ArchivedCopy

// ArchivedCopies lists the archived local skills of the workspace and
// user layers, newest first.
func (e *Engine) ArchivedCopies() []ArchivedCopy {
	return curator.ArchivedCopies(e.view().LayerDirs()...)
}

// Restore makes an archived skill active again: a local skill's newest
// archived copy moves back, and a marketplace skill is materialized again
// at once (curator.Store.Restore).
func (e *Engine) Restore(ctx context.Context, name string) (string, error) {
	restored, marketplace, err := e.Usage().Restore(ctx, curator.RestoreRequest{Name: name, Dirs: e.view().LayerDirs(), Actor: e.actor, Now: e.now(),
		Winner: func(name string) (layering.Layer, string, bool) {
			w, _, err := e.Lookup(ctx, name)
			if err != nil {
				return 0, "", false
			}
			return w.Layer, w.Source, true
		}})
	if err == nil && marketplace {
		if err = e.resync(ctx); err == nil {
			if w, _, lerr := e.Lookup(ctx, restored); lerr == nil && w.State == layering.Unsynced {
				err = fmt.Errorf("%w: %s is active again, but source %s could not be read to bring its files back: the next sync that reads it does", ErrPartial, restored, w.Source)
			}
		}
	}
	return restored, err
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
