package syncrun

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/skillsync/skillsync/lock"
	"github.com/skillsync/skillsync/repository"
)

// DefaultJobs is how many sources are fetched at once.
const DefaultJobs = 4

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

// Duration is how long the fetch took.
func (f FetchReport) Duration() time.Duration { return time.Duration(f.DurationMS) * time.Millisecond }

// FetchErr is ErrFailed when every fetch in reports failed, ErrPartial
// when some did, nil otherwise.
func FetchErr(reports []FetchReport) error {
	failed := 0
	for _, r := range reports {
		if r.Status == StatusFailed {
			failed++
		}
	}
	return Failures(failed, len(reports))
}

// OutdatedErr is ErrFailed when no source of out could be checked,
// ErrPartial when some could not, nil otherwise.
func OutdatedErr(out []lock.Outdated) error {
	failed := 0
	for _, o := range out {
		if o.Error != "" {
			failed++
		}
	}
	return Failures(failed, len(out))
}

// Failures is the error of a command that failed for failed of its total
// sources: ErrFailed for all of them, ErrPartial for some, nil for none.
func Failures(failed, total int) error {
	switch {
	case failed == 0:
		return nil
	case failed == total:
		return fmt.Errorf("%w (%d of %d)", ErrFailed, failed, total)
	}
	return fmt.Errorf("%w (%d of %d)", ErrPartial, failed, total)
}

// Pending is one source's fetch under way.
type Pending struct {
	report FetchReport
	// ready is closed once report is set; nil when there is nothing to
	// wait for.
	ready chan struct{}
}

// Wait waits for the fetch to end and returns its report.
func (p *Pending) Wait() FetchReport {
	if p.ready != nil {
		<-p.ready
	}
	return p.report
}

// Start starts bringing repos up to date, jobs at a time, and returns at
// once: each source's report is ready when its Wait returns, so the first
// source is materialized while the others still fetch. Sources that share
// a git store are all fetched before any is read, since a fetch writes
// the store another reads. Offline, it reads the revision each copy
// holds. wait waits for every fetch.
func Start(ctx context.Context, repos []repository.Fetcher, jobs int, offline bool) (pending []*Pending, wait func()) {
	pending = make([]*Pending, len(repos))
	stores := map[string]bool{}
	shared := false
	for i, f := range repos {
		pending[i] = &Pending{}
		if st, ok := f.(interface{ StoreDir() string }); ok {
			key := st.StoreDir()
			shared = shared || stores[key]
			stores[key] = true
		}
	}
	if offline {
		for i, f := range repos {
			pending[i].report = offlineReport(ctx, f)
		}
		return pending, func() {}
	}
	all := make(chan struct{})
	for _, p := range pending {
		p.ready = make(chan struct{})
		if shared {
			p.ready = all
		}
	}
	go func() {
		defer close(all)
		fetchEach(ctx, repos, jobs, func(i int, rep FetchReport) {
			pending[i].report = rep
			if !shared {
				close(pending[i].ready)
			}
		})
	}()
	return pending, func() { <-all }
}

// FetchAll fetches repos, jobs at a time.
func FetchAll(ctx context.Context, repos []repository.Fetcher, jobs int) []FetchReport {
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

// offlineReport returns r's stored revision as a fetch that changed
// nothing.
func offlineReport(ctx context.Context, r repository.Fetcher) FetchReport {
	rev, err := repository.Current(ctx, r)
	rep := FetchReport{Source: r.Source(), Revision: string(rev), Status: StatusUnchanged}
	if err != nil {
		rep.Status, rep.Error, rep.Err = StatusFailed, err.Error(), err
	}
	return rep
}
