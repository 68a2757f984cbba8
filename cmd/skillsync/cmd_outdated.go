package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
)

type outdatedOptions struct{}

func newOutdatedCommand(a *app, runF func(context.Context, *outdatedOptions) error) *cobra.Command {
	opts := &outdatedOptions{}
	return &cobra.Command{
		Use:     "outdated",
		Aliases: []string{"check"},
		Short:   "Show which sources moved upstream and what an update would change",
		Long: `For each source, compare the revision skillsync.lock pins with the one
upstream and, where they differ, list the skills skillsync update would add,
change and remove. Nothing in the workspace changes. The exit status is 0
when every source could be checked, behind or not (run skillsync update to
move), 3 when some could not, 1 when none could.

A git source costs one listing of the remote's refs when nothing moved; when
it moved, the new commit is fetched into the machine's git store (shared by
every workspace), where skillsync update finds it.`,
		Example: `  skillsync outdated
  skillsync check --json | jq '.[] | select(.behind)'`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return pick(runF, a.runOutdated)(c.Context(), opts)
		},
	}
}

func (a *app) runOutdated(ctx context.Context, _ *outdatedOptions) error {
	eng, err := a.engine()
	if err != nil {
		return err
	}
	out, err := eng.Outdated(ctx)
	if err != nil && !errors.Is(err, skillsync.ErrPartial) && !errors.Is(err, skillsync.ErrFailed) {
		return err
	}
	if a.json {
		if werr := writeJSON(a.stdout, out); werr != nil {
			return werr
		}
		return reported(err)
	}
	tw := newTable(a.stdout)
	fmt.Fprintln(tw, "SOURCE\tLOCKED\tUPSTREAM\tCHANGES")
	for _, o := range out {
		changes := "up to date"
		switch {
		case o.Error != "":
			changes = "unknown"
		case o.Behind:
			changes = fmt.Sprintf("%d added, %d changed, %d removed", len(o.Added), len(o.Changed), len(o.Removed))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", o.Source, shortRev(o.Locked), shortRev(o.Upstream), changes)
	}
	tw.Flush()
	for _, o := range out {
		for _, l := range []struct {
			sign  string
			names []string
		}{{"+", o.Added}, {"~", o.Changed}, {"-", o.Removed}} {
			if len(l.names) > 0 {
				fmt.Fprintf(a.stdout, "  %s %s/%s\n", l.sign, o.Source, safe(strings.Join(l.names, ", "+o.Source+"/")))
			}
		}
		if o.Error != "" {
			a.logError(fmt.Sprintf("source %s: %s", o.Source, safe(o.Error)))
		}
	}
	return reported(err)
}
