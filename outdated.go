package skillsync

import (
	"context"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/lock"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
)

// Outdated is how far one source is behind its upstream.
type Outdated struct {
	Source string `json:"source"`
	// Locked is the revision skillsync.lock pins (the cache's when there
	// is no lock); Upstream the one the source holds now.
	Locked   string `json:"locked"`
	Upstream string `json:"upstream"`
	// Behind is set when Upstream differs from Locked; the lists then say
	// what skillsync update would add, change and remove.
	Behind  bool     `json:"behind"`
	Added   []string `json:"added"`
	Changed []string `json:"changed"`
	Removed []string `json:"removed"`
	Error   string   `json:"error,omitempty"`
}

// Outdated compares every source's locked revision with its upstream and,
// for each source that moved, lists the skills an update would add, change
// and remove. A git source costs one ref listing when nothing moved, and a
// fetch into the machine's git store when it did; the workspace (config,
// cache, lock, targets) is not changed. One source's error is its
// report's Error; the others go on.
func (e *Engine) Outdated(ctx context.Context) ([]Outdated, error) {
	locked, _, err := lock.Read(e.layout.LockFile(), e.kinds)
	if err != nil {
		return nil, err
	}
	m, err := materialize.ReadManifest(e.layout.CacheDir())
	if err != nil {
		return nil, err
	}
	out := make([]Outdated, 0, len(e.cfg.Sources))
	for _, s := range e.cfg.Sources {
		o := Outdated{Source: s.Name, Added: []string{}, Changed: []string{}, Removed: []string{}}
		rec := m.Sources[s.Name]
		if l, ok := locked.Sources[s.Name]; ok {
			o.Locked = l.Revision
		} else if rec != nil {
			o.Locked = rec.Revision
		}
		if err := e.compareUpstream(ctx, s, rec, &o); err != nil {
			o.Error = err.Error()
		}
		out = append(out, o)
	}
	return out, nil
}

// compareUpstream fills o with what s holds upstream against rec, what
// the cache holds of it.
func (e *Engine) compareUpstream(ctx context.Context, s config.Source, rec *materialize.SourceRecord, o *Outdated) error {
	r, err := e.open(s, "")
	if err != nil {
		return err
	}
	defer closeRepository(r)
	up, err := repository.Upstream(ctx, r)
	if err != nil {
		return err
	}
	o.Upstream = string(up)
	if o.Upstream == o.Locked {
		return nil
	}
	o.Behind = true
	if _, err := repository.Fetch(ctx, r); err != nil {
		return err
	}
	skills, _, err := r.Skills(ctx)
	if err != nil {
		return err
	}
	skills, _ = layering.Dedupe(skills)
	o.Added, o.Changed, o.Removed = materialize.Compare(ctx, skills, rec)
	return nil
}
