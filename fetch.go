package skillsync

import (
	"context"
	"slices"

	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/syncrun"
)

// Fetch brings the local copies of the named sources (all that have one
// when none are named) up to date, jobs at a time, and changes nothing in
// the workspace. One failing source never stops the others; each report
// says how its source fared, and the error is ErrPartial (some failed) or
// ErrFailed (all did). A named source that has nothing to fetch is a
// UsageError.
func (e *Engine) Fetch(ctx context.Context, names []string, jobs int) ([]FetchReport, error) {
	if err := e.checkNames(names); err != nil {
		return nil, err
	}
	var repos []repository.Fetcher
	var broken []FetchReport
	for _, s := range e.cfg.Sources {
		if len(names) > 0 && !slices.Contains(names, s.Name) {
			continue
		}
		r, err := e.open(s, "")
		if err != nil {
			broken = append(broken, FetchReport{Source: s.Name, Status: StatusFailed, Error: err.Error(), Err: err})
			continue
		}
		f, ok := r.(repository.Fetcher)
		if !ok {
			if len(names) > 0 {
				return nil, usageErrorf("source %s is a %s source: it is read in place and has nothing to fetch", s.Name, s.Kind)
			}
			continue
		}
		repos = append(repos, f)
	}
	reports := append(syncrun.FetchAll(ctx, repos, jobs), broken...)
	return reports, syncrun.FetchErr(reports)
}
