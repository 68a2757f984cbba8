package curator

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/skillsync/skillsync/layering"
)

// RestoreRequest is a restore of an archived skill by name.
type RestoreRequest struct {
	Name string
	// Dirs are the local layers whose .archive/ is searched.
	Dirs []LayerDir
	// Winner returns the layer and source a skill of that name comes from
	// now; ok is false when none does.
	Winner func(name string) (layer layering.Layer, source string, ok bool)
	Actor  string
	Now    time.Time
}

// Restore makes an archived skill active again: a local skill's newest
// archived copy moves back (ArchivedCopy.Restore), and a marketplace
// copy is marked active, for the caller to materialize again
// (marketplace set). It refuses, saying why, when a skill of that name
// now stands where the copy would go. It returns the copy's name.
func (s *Store) Restore(ctx context.Context, req RestoreRequest) (name string, marketplace bool, err error) {
	key := layering.Key(req.Name)
	for _, c := range ArchivedCopies(req.Dirs...) {
		if layering.Key(c.Name) != key {
			continue
		}
		if err := c.CanRestore(); err != nil {
			return "", false, err
		}
		if layer, source, ok := req.Winner(c.Name); ok && layer >= c.Layer {
			return "", false, fmt.Errorf("restore %s: a skill of that name now comes from %s (%s layer); the archived copy stays in %s", c.Name, source, layer, c.Dir)
		}
		dst, err := c.Restore()
		if err != nil {
			return "", false, err
		}
		return c.Name, false, s.MarkRestored(ctx, c.Copy, req.Actor, "moved back from "+c.Dir+" to "+dst, req.Now)
	}
	u, err := s.Load()
	if err != nil {
		return "", false, err
	}
	for _, c := range u.Archived(req.Name) {
		if c.Layer == layering.Marketplace {
			return c.Name, true, s.MarkRestored(ctx, c, req.Actor, "materialized again", req.Now)
		}
	}
	return "", false, fmt.Errorf("restore %s: no archived skill of that name", req.Name)
}

// Archives reports whether the plan archives a copy of layer.
func (p Plan) Archives(layer layering.Layer) bool {
	for _, c := range p.Changes {
		if c.To == Archived && c.Copy.Layer == layer {
			return true
		}
	}
	return false
}

// Job is a curation of a workspace with what the workspace gives it.
type Job struct {
	// Catalog returns the catalog that stands now; CopyOf names the copy
	// of each of its entries, and Store the usage store over it.
	Catalog func(context.Context) (*layering.Catalog, error)
	CopyOf  func(*layering.Entry) (Copy, bool)
	Store   func(*layering.Catalog) *Store
	// Dirs are the local layers whose skills an archive moves.
	Dirs []LayerDir
	// Seen records the first sighting of the catalog's copies at now.
	Seen func(ctx context.Context, cat *layering.Catalog, now time.Time) error
	// Elsewhere returns the fleet's last uses (nil without a fleet), or
	// why curation must wait.
	Elsewhere func(ctx context.Context, now time.Time) (map[Copy]time.Time, string, error)
	// Resync takes archived marketplace copies out of the cache.
	Resync func(context.Context) error
}

// unseen returns the candidates the usage record has no sighting of. A
// corrupt record has none: the sighting that follows sets it aside.
func (j Job) unseen(cat *layering.Catalog, candidates []Candidate) (map[Copy]bool, error) {
	u, err := j.Store(cat).Load()
	if err != nil && !IsCorrupt(err) {
		return nil, err
	}
	fresh := map[Copy]bool{}
	for _, cand := range candidates {
		if _, ok := u.Skills[cand.Copy]; !ok {
			fresh[cand.Copy] = true
		}
	}
	return fresh, nil
}

// Run curates the catalog's copies with c (whose Candidates and
// Elsewhere it fills): skills never seen before are first seen at the
// clock, not at a Now the caller chose, so
// their idle time starts here (not on a dry run); a fleet that must wait
// skips the curation, saying why; a marketplace copy archived asks for a
// resync.
func (j Job) Run(ctx context.Context, c Curation) (Plan, error) {
	c.Now = cmp.Or(c.Now, c.Clock)
	cat, err := j.Catalog(ctx)
	if err != nil {
		return Plan{}, err
	}
	c.Candidates = CandidatesOf(cat.Winners, j.CopyOf, j.Dirs)
	if !c.DryRun {
		if c.Fresh, err = j.unseen(cat, c.Candidates); err != nil {
			return Plan{}, err
		}
		if err := j.Seen(ctx, cat, c.at()); err != nil {
			return Plan{}, err
		}
	}
	elsewhere, skipped, err := j.Elsewhere(ctx, c.Now)
	if err != nil {
		return Plan{}, err
	}
	if skipped != "" {
		return Plan{Changes: []Change{}, Skills: []Checked{}, Skipped: skipped}, nil
	}
	c.Elsewhere = elsewhere
	plan, err := j.Store(cat).Curate(ctx, c)
	if err == nil && !c.DryRun && plan.Archives(layering.Marketplace) {
		if err := j.Resync(ctx); err != nil {
			return plan, fmt.Errorf("take archived skills out of the cache: %w", err)
		}
	}
	return plan, err
}
