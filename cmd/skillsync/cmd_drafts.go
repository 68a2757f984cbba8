package main

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync/internal/termtext"
)

type draftsOptions struct{}

type draftsDiffOptions struct {
	name string
}

func newDraftsCommand(a *app, runF func(context.Context, *draftsOptions) error) *cobra.Command {
	opts := &draftsOptions{}
	cmd := &cobra.Command{
		Use:   "drafts",
		Short: "List the drafts waiting for the promotion gate",
		Long: `List the drafts in skills/_drafts/: for each its strict validation result
(every Agent Skills warning counts as a problem, as do links, FIFOs and
files over max_file_size), its author (metadata.author in SKILL.md; a
top-level author: is not in the specification, so strict validation refuses
it), when it was created, and, when the catalog has a skill of that
name, which files the draft adds (+), changes (~) and removes (-) against
the copy that wins now. skillsync drafts diff NAME prints the whole diff.

It writes nothing.`,
		Example: `  skillsync drafts
  skillsync drafts --json | jq '.[] | select(.valid)'
  skillsync drafts diff pdf`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return pick(runF, a.runDrafts)(c.Context(), opts)
		},
	}
	cmd.AddCommand(newDraftsDiffCommand(a, nil))
	return cmd
}

func newDraftsDiffCommand(a *app, runF func(context.Context, *draftsDiffOptions) error) *cobra.Command {
	opts := &draftsDiffOptions{}
	return &cobra.Command{
		Use:   "diff NAME",
		Short: "Print the unified diff from the catalog's skill to the draft",
		Long: `Print the unified diff, in git's format, from the catalog's skill of the
draft's name (a/, the copy that wins now) to the draft (b/): every file the
draft adds, changes or removes. With no skill of that name, every file of
the draft is new. Binary files and files over 1 MiB are named without their
lines. On a terminal, control characters are shown escaped; piped, the diff
is as it is, for git apply.`,
		Example: `  skillsync drafts diff pdf
  skillsync drafts diff pdf | less`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			opts.name = argv[0]
			return pick(runF, a.runDraftsDiff)(c.Context(), opts)
		},
	}
}

func (a *app) runDrafts(ctx context.Context, _ *draftsOptions) error {
	eng, err := a.engine()
	if err != nil {
		return err
	}
	drafts, err := eng.Gate().List(ctx)
	if err != nil {
		return err
	}
	if a.json {
		return writeJSON(a.stdout, orEmpty(drafts))
	}
	if len(drafts) == 0 {
		fmt.Fprintln(a.stdout, "no drafts; skillsync propose DIR adds one")
		return nil
	}
	tw := newTable(a.stdout)
	fmt.Fprintln(tw, "NAME\tSTATUS\tAUTHOR\tCREATED\tCHANGES")
	for _, d := range drafts {
		status := "valid"
		if !d.Valid {
			status = plural(len(d.Problems), "problem")
		}
		author := d.Author
		if author == "" {
			author = "-"
		}
		changes := "new skill"
		if d.Diff != nil {
			changes = d.Diff.String()
			if d.Diff.Same() {
				changes = "same as " + d.Diff.Against
			}
		}
		created := "-"
		if !d.Created.IsZero() {
			created = d.Created.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", safe(d.Name), status, safe(author), created, safe(changes))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, d := range drafts {
		for _, p := range d.Problems {
			fmt.Fprintln(a.stdout, "  "+p.String())
		}
	}
	return nil
}

func (a *app) runDraftsDiff(ctx context.Context, opts *draftsDiffOptions) error {
	eng, err := a.engine()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	against, err := eng.Gate().Diff(ctx, &buf, opts.name)
	if err != nil {
		return err
	}
	if !a.quiet {
		if against == "" {
			fmt.Fprintf(a.stderr, "no skill named %s in the catalog: every file of the draft is new\n", safe(opts.name))
		} else {
			fmt.Fprintf(a.stderr, "a/ is %s, b/ the draft\n", safe(against))
		}
	}
	out := buf.Bytes()
	if isTerminal(a.stdout) {
		out = []byte(termtext.EscapeLines(buf.String()))
	}
	_, err = a.stdout.Write(out)
	return err
}
