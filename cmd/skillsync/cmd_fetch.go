package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
)

type fetchOptions struct {
	sources []string
	jobs    int
}

func newFetchCommand(a *app, runF func(context.Context, *fetchOptions) error) *cobra.Command {
	opts := &fetchOptions{}
	cmd := &cobra.Command{
		Use:   "fetch [SOURCE...]",
		Short: "Bring the git sources' stores up to date, changing nothing in the workspace",
		Long: `Bring the git stores of the named sources (all git sources when none are
named) up to date. The remote's refs are listed first; when the wanted commit
is already stored nothing is downloaded. The workspace does not change: list,
show, read, search and prompt go on showing what the last sync wrote, until
skillsync sync materializes what was fetched.

Per source it prints the revision, updated or unchanged (or failed, with the
reason), and how long it took. One failing source never stops the others: the
exit status is 3 when some failed and 1 when all did.`,
		Example: `  skillsync fetch
  skillsync fetch team --json`,
		Annotations: map[string]string{bigHeap: "yes"},
		RunE: func(c *cobra.Command, sources []string) error {
			opts.sources = sources
			return pick(runF, a.runFetch)(c.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.jobs, "jobs", skillsync.DefaultJobs, "sources fetched at once")
	return cmd
}

func (a *app) runFetch(ctx context.Context, opts *fetchOptions) error {
	if opts.jobs < 1 {
		return usageError("--jobs must be at least 1")
	}
	progress := a.progress()
	eng, err := a.engine(progress.option()...)
	if err != nil {
		return err
	}
	reports, err := eng.Fetch(ctx, opts.sources, opts.jobs)
	progress.clear()
	if reports == nil && err != nil {
		return err
	}
	if a.json {
		if err := writeJSON(a.stdout, orEmpty(reports)); err != nil {
			return err
		}
	} else {
		a.printFetch(reports)
	}
	return reported(err)
}

func (a *app) printFetch(reports []skillsync.FetchReport) {
	if len(reports) == 0 {
		fmt.Fprintln(a.stderr, "no git sources in the config: nothing to fetch")
		return
	}
	tw := newTable(a.stdout)
	for _, r := range reports {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Source, shortRev(r.Revision), r.Status, (time.Duration(r.DurationMS) * time.Millisecond))
	}
	tw.Flush()
	for _, r := range reports {
		for _, w := range r.Warnings {
			a.warn("source %s: %s", r.Source, safe(w))
		}
		if r.Err != nil {
			a.logError(fmt.Sprintf("source %s: %s", r.Source, safe(r.Error)))
		}
	}
}
