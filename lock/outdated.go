package lock

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/skillsync/skillsync/layering"
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

// Outdated compares the locked revision of each of sources (the cache's,
// m, where f has none) with its upstream and, for each source that moved,
// lists the skills an update would add, change and remove against what
// the cache holds. open opens a source; a git source costs one ref
// listing when nothing moved, and a fetch into the machine's git store
// when it did. One source's error is its report's Error; the others go
// on.
func (f *File) Outdated(ctx context.Context, m *materialize.Manifest, sources []string, open func(source string) (repository.Repository, error)) []Outdated {
	out := make([]Outdated, 0, len(sources))
	for _, name := range sources {
		o := Outdated{Source: name, Added: []string{}, Changed: []string{}, Removed: []string{}}
		rec := m.Sources[name]
		if l, ok := f.Sources[name]; ok {
			o.Locked = l.Revision
		} else if rec != nil {
			o.Locked = rec.Revision
		}
		if err := o.compare(ctx, rec, open); err != nil {
			o.Error = err.Error()
		}
		out = append(out, o)
	}
	return out
}

// compare fills o with what its source holds upstream against rec, what
// the cache holds of it.
func (o *Outdated) compare(ctx context.Context, rec *materialize.SourceRecord, open func(string) (repository.Repository, error)) error {
	r, err := open(o.Source)
	if err != nil {
		return err
	}
	defer repository.Close(r)
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
	skills, problems, err := r.Skills(ctx)
	if err != nil {
		return err
	}
	skills, _ = layering.Dedupe(skills)
	o.Added, o.Changed, o.Removed = materialize.Compare(ctx, skills, rec, problems)
	if materialize.Cut(problems) {
		// What the listing did not reach is unknown: neither kept nor gone.
		return fmt.Errorf("the listing of revision %s stopped at max_entries, so what an update would change past it is unknown; raise max_entries for a source this big", short(string(up)))
	}
	return nil
}

// Verify hashes the cache at cacheDir and the targets again and compares
// them with the manifest, the target records and f, when not nil; each
// of sources, the configured ones, that the manifest has no record of is
// a difference too. It changes nothing.
func (f *File) Verify(ctx context.Context, cacheDir string, sources, targets []string) ([]materialize.Difference, error) {
	m, err := materialize.ReadManifest(cacheDir)
	if err != nil {
		return nil, err
	}
	diffs := materialize.UnsyncedSources(cacheDir, m, sources)
	diffs = append(diffs, materialize.VerifyCache(cacheDir, m)...)
	for _, t := range targets {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rec, err := materialize.LoadTargetRecord(t)
		if err != nil {
			return nil, err
		}
		diffs = append(diffs, rec.Verify(t)...)
		// A target another workspace keeps holds none of this one's skills.
		if other := rec.KeptElsewhere(t, filepath.Dir(cacheDir)); other != "" {
			diffs = append(diffs, materialize.Difference{Path: t + " (kept by the workspace " + other + ")", Kind: materialize.Unsynced})
		}
	}
	if f != nil {
		diffs = append(diffs, f.Differences(m)...)
	}
	return diffs, nil
}
