package skillsync

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/skillsync/skillsync/repository"
)

// DefaultJobs is how many sources are fetched at once.
const DefaultJobs = 4

// Fetch statuses.
const (
	StatusUpdated   = "updated"
	StatusUnchanged = "unchanged"
	StatusFailed    = "failed"
)

// FetchResult is what fetching one source did.
type FetchResult struct {
	Source   string        `json:"source"`
	URL      string        `json:"-"`
	Revision string        `json:"revision"`
	Status   string        `json:"status"`
	Error    string        `json:"error"`
	Duration time.Duration `json:"-"`
	// DurationMS is Duration in milliseconds, for JSON.
	DurationMS int64 `json:"duration_ms"`
	// Err is the error behind Error, for errors.Is.
	Err error `json:"-"`
}

// GitSources returns the git sources of the config, or of names when any
// are given; a name that is not a git source is an error.
func (e *Engine) GitSources(names []string) ([]*repository.Git, error) {
	repos, err := e.Repositories()
	if err != nil {
		return nil, err
	}
	var out []*repository.Git
	known := map[string]bool{}
	for _, r := range repos {
		known[r.Source()] = true
		if g, ok := r.(*repository.Git); ok && (len(names) == 0 || slices.Contains(names, r.Source())) {
			out = append(out, g)
		}
	}
	for _, n := range names {
		if !known[n] {
			return nil, fmt.Errorf("no source named %q in the config", n)
		}
		if !slices.ContainsFunc(out, func(g *repository.Git) bool { return g.Source() == n }) {
			return nil, fmt.Errorf("source %q is not a git source; only git sources are fetched", n)
		}
	}
	return out, nil
}

// Fetch brings the git stores of the named sources (all when none are
// named) up to date, jobs at a time. One failing source never stops the
// others; each result says how its source fared.
func (e *Engine) Fetch(ctx context.Context, names []string, jobs int) ([]FetchResult, error) {
	sources, err := e.GitSources(names)
	if err != nil {
		return nil, err
	}
	repos := make([]repository.Repository, len(sources))
	for i, g := range sources {
		repos[i] = g
	}
	return e.fetchAll(ctx, repos, SyncOptions{Jobs: jobs}), nil
}

func fetchOne(ctx context.Context, g *repository.Git) FetchResult {
	start := time.Now()
	res, err := g.Fetch(ctx)
	r := FetchResult{Source: g.Source(), URL: g.URL(), Revision: string(res.Revision), Status: StatusUnchanged}
	switch {
	case err != nil:
		r.Status, r.Error, r.Err = StatusFailed, err.Error(), err
		if rev, cerr := g.Current(ctx); cerr == nil {
			r.Revision = string(rev)
		}
	case res.Updated:
		r.Status = StatusUpdated
	}
	r.Duration = time.Since(start)
	r.DurationMS = r.Duration.Milliseconds()
	return r
}
