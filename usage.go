package skillsync

import (
	"context"

	"github.com/skillsync/skillsync/curator"
)

// Use records that a catalog skill was used (or, with view, looked at)
// now, and returns its name as the catalog spells it. A hidden skill is
// refused.
func (e *Engine) Use(ctx context.Context, name string, view bool) (string, error) {
	cat, err := e.Catalog(ctx)
	if err != nil {
		return "", err
	}
	w, err := e.find(cat, name, false)
	if err != nil {
		return "", err
	}
	return w.Skill.Name, e.Usage().Record(ctx, w.Skill.Name, view, e.now())
}

// Pin keeps a skill as it is through every curation; unpinned, it is
// curated again.
func (e *Engine) Pin(ctx context.Context, name string, pinned bool) (string, error) {
	w, _, err := e.Lookup(ctx, name)
	if err != nil {
		return "", err
	}
	name = w.Skill.Name
	changed := false
	err = e.Usage().Update(ctx, func(u *curator.Usage) error {
		s := u.Skill(name)
		changed = s.Pinned != pinned
		s.Pinned = pinned
		return nil
	})
	if err != nil || !changed {
		return name, err
	}
	op := map[bool]string{true: "pinned", false: "unpinned"}[pinned]
	return name, e.Audit().Append(curator.Event{TS: e.now(), Actor: e.actor, Op: op, Target: name})
}
