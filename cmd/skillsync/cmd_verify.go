package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/materialize"
	wsfiles "github.com/skillsync/skillsync/workspace"
)

type verifyOptions struct {
	repair bool
	sync   syncOptions
}

func newVerifyCommand(a *app, runF func(context.Context, *verifyOptions) error) *cobra.Command {
	opts := &verifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Hash the cache and targets again and compare them with the records",
		Long: `Hash every file of the cache and the targets again and compare them with
the manifest, the targets' records and skillsync.lock. Modified, missing and
extra files are listed, and configured sources that no sync has brought into
the cache yet (unsynced); the exit status is 1 when there is any.

--repair rewrites what differs, at the locked revisions, then verifies again.`,
		Example: `  skillsync verify
  skillsync verify --repair --json`,
		Args:        args(cobra.NoArgs),
		Annotations: map[string]string{bigHeap: "yes"},
		RunE: func(c *cobra.Command, _ []string) error {
			return pick(runF, a.runVerify)(c.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.repair, "repair", false, "rewrite whatever differs")
	addSyncFlags(cmd, &opts.sync)
	return cmd
}

type verifyJSON struct {
	Differences []materialize.Difference `json:"differences"`
	Repaired    []materialize.Difference `json:"repaired"`
}

// mended are the differences found that the repair left none of.
func mended(found, left []materialize.Difference) []materialize.Difference {
	out := []materialize.Difference{}
	for _, d := range found {
		if !slices.Contains(left, d) {
			out = append(out, d)
		}
	}
	return out
}

// unsynced counts the sources among diffs that the cache never held.
func unsynced(diffs []materialize.Difference) int {
	n := 0
	for _, d := range diffs {
		// A target's (refused, or kept by another workspace) is named
		// by its own path, not one in the cache.
		if d.Kind == materialize.Unsynced && filepath.Base(filepath.Dir(d.Path)) == wsfiles.CacheName {
			n++
		}
	}
	return n
}

func (a *app) runVerify(ctx context.Context, opts *verifyOptions) error {
	open := a.engine
	if opts.repair {
		open = a.writeEngine
	}
	eng, err := open()
	if err != nil {
		return err
	}
	out := verifyJSON{Repaired: []materialize.Difference{}}
	// failed is the repair's sync, when some of its sources failed: what
	// it found and left is printed all the same.
	var failed error
	if opts.repair {
		res, err := eng.Repair(ctx, opts.sync.engineOptions())
		if res != nil && res.Sync != nil {
			for _, w := range res.Sync.Warnings {
				a.warn("%s", safe(w))
			}
			for _, s := range res.Sync.Sources {
				if s.Error != "" {
					a.warn("source %s failed: %s", s.Source, safe(s.Error))
				}
			}
			out.Repaired, out.Differences = mended(res.Found, res.Left), res.Left
		} else if res != nil {
			out.Differences = res.Found
		}
		if err != nil && !errors.Is(err, skillsync.ErrPartial) && !errors.Is(err, skillsync.ErrFailed) {
			return err
		}
		failed = err
	} else if out.Differences, err = eng.Verify(ctx); err != nil {
		return err
	}
	out.Differences = orEmpty(out.Differences)
	if a.json {
		if err := writeJSON(a.stdout, out); err != nil {
			return err
		}
	} else {
		for _, d := range out.Repaired {
			fmt.Fprintf(a.stdout, "repaired %s %s\n", d.Kind, safe(d.Path))
		}
		for _, d := range out.Differences {
			fmt.Fprintf(a.stdout, "%s %s\n", d.Kind, safe(d.Path))
		}
		if len(out.Differences) == 0 && !a.quiet {
			fmt.Fprintln(a.stderr, "verify: the cache and the targets match their records")
		}
		n := unsynced(out.Differences)
		if n > 0 && !a.quiet {
			fmt.Fprintf(a.stderr, "verify: %s not in this cache: no sync has brought it; skillsync sync brings it, or says why it cannot\n", plural(n, "source"))
		}
		if m := len(out.Differences) - n; m > 0 && !opts.repair && !a.quiet {
			// A list of paths and exit 1 alone leave the next step a guess.
			differ := fmt.Sprintf("%d files differ from their records", m)
			if m == 1 {
				differ = "1 file differs from its record"
			}
			fmt.Fprintf(a.stderr, "verify: %s: skillsync verify --repair rewrites what differs, moving an edited copy in a target aside into %s first\n",
				differ, materialize.ConflictsName)
		}
	}
	if len(out.Differences) > 0 {
		return reported(errDifferences)
	}
	return reported(failed)
}
