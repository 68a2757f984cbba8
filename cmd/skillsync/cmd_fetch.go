package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
)

type fetchOptions struct {
	sources []string
	jobs    int
}

func (a *app) fetchCommand() *cobra.Command {
	var opts fetchOptions
	cmd := &cobra.Command{
		Use:   "fetch [SOURCE...]",
		Short: "Bring the git sources up to date",
		Long: `Bring the git stores of the named sources (all git sources when none are
named) up to date. The remote's refs are listed first; when the wanted commit
is already stored nothing is downloaded.

Per source it prints the revision, updated or unchanged (or failed, with the
reason), and how long it took. One failing source never stops the others: the
exit status is 3 when some failed and 1 when all did. A failed source keeps
its last good revision, which list, show, read, search and prompt go on using.`,
		Example: `  skillsync fetch
  skillsync fetch team --json`,
		RunE: func(c *cobra.Command, sources []string) error {
			opts.sources = sources
			return a.runFetch(c.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.jobs, "jobs", skillsync.DefaultJobs, "sources fetched at once")
	return cmd
}

func (a *app) runFetch(ctx context.Context, opts fetchOptions) error {
	if opts.jobs < 1 {
		return usageError("--jobs must be at least 1")
	}
	var progress *progressLine
	var engineOpts []skillsync.Option
	if !a.quiet && !a.json && isTerminal(a.stderr) {
		progress = &progressLine{out: a.stderr}
		engineOpts = append(engineOpts, skillsync.WithProgress(progress.writer))
	}
	eng, err := a.engine(engineOpts...)
	if err != nil {
		return err
	}
	results, err := eng.Fetch(ctx, opts.sources, opts.jobs)
	if progress != nil {
		progress.clear()
	}
	if err != nil {
		return usageError("%v", err)
	}
	if a.json {
		if err := writeJSON(a.stdout, orEmpty(results)); err != nil {
			return err
		}
	} else {
		a.printFetch(results)
	}
	return fetchExit(results)
}

func (a *app) printFetch(results []skillsync.FetchResult) {
	if len(results) == 0 {
		fmt.Fprintln(a.stderr, "no git sources in the config: nothing to fetch")
		return
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	for _, r := range results {
		rev := r.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev == "" {
			rev = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Source, rev, r.Status, r.Duration.Round(time.Millisecond))
	}
	tw.Flush()
	for _, r := range results {
		if r.Err != nil {
			fmt.Fprintf(a.stderr, "skillsync: source %s: %s\n", r.Source, r.Error)
		}
	}
}

// fetchExit is 3 when some sources failed and 1 when all did.
func fetchExit(results []skillsync.FetchResult) error {
	failed := 0
	for _, r := range results {
		if r.Status == skillsync.StatusFailed {
			failed++
		}
	}
	switch {
	case failed == 0:
		return nil
	case failed == len(results):
		return &exitError{code: exitFailure}
	}
	return &exitError{code: exitPartial}
}
