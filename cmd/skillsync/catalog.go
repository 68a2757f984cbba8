package main

import (
	"context"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/layering"
)

// catalog builds the catalog and reports its problems as warnings.
func (a *app) catalog(ctx context.Context) (*skillsync.Engine, *layering.Catalog, error) {
	eng, err := a.engine()
	if err != nil {
		return nil, nil, err
	}
	cat, err := eng.Catalog(ctx)
	if err != nil {
		return nil, nil, err
	}
	a.reportProblems(cat.Problems)
	return eng, cat, nil
}

// entryJSON is one source's version of a skill.
type entryJSON struct {
	Layer    layering.Layer `json:"layer"`
	Source   string         `json:"source"`
	Path     string         `json:"path"`
	Revision string         `json:"revision,omitempty"`
}

func newEntryJSON(e *layering.Entry) entryJSON {
	return entryJSON{Layer: e.Layer, Source: e.Source, Path: entryPath(e), Revision: e.Revision}
}

// entryPath is the skill's directory on disk, or its path in its source
// when it has no directory.
func entryPath(e *layering.Entry) string {
	if e.Dir != "" {
		return e.Dir
	}
	return e.Skill.Path
}

func shadowedJSON(w *layering.Winner) []entryJSON {
	out := make([]entryJSON, 0, len(w.Shadowed))
	for i := range w.Shadowed {
		out = append(out, newEntryJSON(&w.Shadowed[i]))
	}
	return out
}
