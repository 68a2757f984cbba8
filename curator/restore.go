package curator

import (
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
