package skillsync

import (
	"context"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/skillsync/skillsync/repository"
)

// DefaultJobs is how many sources are fetched at once.
const DefaultJobs = 4

// Status is how a source fared in a fetch or a sync.
type Status string

// The statuses of a source.
const (
	StatusUpdated   Status = "updated"
	StatusUnchanged Status = "unchanged"
	StatusFailed    Status = "failed"
	// StatusPartial is a source synced but for some skills that could
	// not be written, which keep their last good files.
	StatusPartial Status = "partial"
)

// FetchReport is what fetching one source did.
type FetchReport struct {
	Source   string `json:"source"`
	Revision string `json:"revision"`
	Status   Status `json:"status"`
	Error    string `json:"error"`
	// DurationMS is how long the fetch took, in milliseconds.
	DurationMS int64 `json:"duration_ms"`
	// Warnings are things the fetch mended on its way, such as a damaged
	// store rebuilt.
	Warnings []string `json:"warnings,omitempty"`
	// Err is the error behind Error, for errors.Is.
	Err error `json:"-"`
}

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
	reports := append(fetchAll(ctx, repos, jobs), broken...)
	failed := 0
	for _, r := range reports {
		if r.Status == StatusFailed {
			failed++
		}
	}
	switch {
	case failed == 0:
		return reports, nil
	case failed == len(reports):
		return reports, fmt.Errorf("%w (%d of %d)", ErrFailed, failed, len(reports))
	}
	return reports, fmt.Errorf("%w (%d of %d)", ErrPartial, failed, len(reports))
}

// fetchAll fetches repos, jobs at a time.
func fetchAll(ctx context.Context, repos []repository.Fetcher, jobs int) []FetchReport {
	out := make([]FetchReport, len(repos))
	fetchEach(ctx, repos, jobs, func(i int, rep FetchReport) { out[i] = rep })
	return out
}

// fetchEach fetches repos, jobs at a time, and hands each report to done
// as soon as its fetch ends, from the fetch's goroutine.
func fetchEach(ctx context.Context, repos []repository.Fetcher, jobs int, done func(int, FetchReport)) {
	if jobs <= 0 {
		jobs = DefaultJobs
	}
	var g errgroup.Group
	g.SetLimit(jobs)
	for i, r := range repos {
		g.Go(func() error {
			done(i, fetchOne(ctx, r))
			return nil
		})
	}
	_ = g.Wait()
}

func fetchOne(ctx context.Context, r repository.Fetcher) FetchReport {
	start := time.Now()
	res, err := r.Fetch(ctx)
	rep := FetchReport{Source: r.Source(), Revision: string(res.Revision), Status: StatusUnchanged, Warnings: res.Warnings}
	switch {
	case err != nil:
		rep.Status, rep.Error, rep.Err = StatusFailed, err.Error(), err
		if rev, cerr := repository.Current(ctx, r); cerr == nil {
			rep.Revision = string(rev)
		}
	case res.Updated:
		rep.Status = StatusUpdated
	}
	rep.DurationMS = time.Since(start).Milliseconds()
	return rep
}

// offline returns r's stored revision as a fetch that changed nothing.
func offline(ctx context.Context, r repository.Fetcher) FetchReport {
	rev, err := repository.Current(ctx, r)
	rep := FetchReport{Source: r.Source(), Revision: string(rev), Status: StatusUnchanged}
	if err != nil {
		rep.Status, rep.Error, rep.Err = StatusFailed, err.Error(), err
	}
	return rep
}
