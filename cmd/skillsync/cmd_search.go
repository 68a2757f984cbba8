package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync/layering"
)

type searchOptions struct {
	query string
	limit int
	all   bool
}

func newSearchCommand(a *app, runF func(context.Context, *searchOptions) error) *cobra.Command {
	opts := &searchOptions{}
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Find skills by name, description, tags and triggers",
		Long: `Find skills by name, description, tags and triggers, best match first.

Matching is lexical: the whole query inside a name, description, tag or
trigger, and its longer words inside names, tags and triggers. Single words
of a description alone never match.`,
		Example: `  skillsync search pdf
  skillsync search --json "release notes"`,
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(c *cobra.Command, words []string) error {
			opts.query = strings.Join(words, " ")
			return pick(runF, a.runSearch)(c.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.limit, "limit", layering.DefaultLimit, "most results to print")
	cmd.Flags().BoolVar(&opts.all, "all", false, "include hidden and archived skills")
	return cmd
}

type searchResult struct {
	Name        string         `json:"name"`
	Score       int            `json:"score"`
	Description string         `json:"description"`
	Layer       layering.Layer `json:"layer"`
	Source      string         `json:"source"`
	State       string         `json:"state"`
}

func (a *app) runSearch(ctx context.Context, opts *searchOptions) error {
	if opts.limit < 1 {
		return usageError("--limit must be at least 1")
	}
	_, cat, err := a.catalog(ctx)
	if err != nil {
		return err
	}
	pool := cat.Visible()
	if opts.all {
		pool = cat.Winners
	}
	results := layering.Search(pool, opts.query, opts.limit)
	if a.json {
		out := make([]searchResult, 0, len(results))
		for _, r := range results {
			w := r.Winner
			out = append(out, searchResult{Name: w.Skill.Name, Score: r.Score, Description: w.Skill.Description, Layer: w.Layer, Source: w.Source, State: w.State})
		}
		return writeJSON(a.stdout, out)
	}
	if len(results) == 0 {
		fmt.Fprintf(a.stderr, "no skill matches %s\n", safe(strconv.Quote(opts.query)))
		return nil
	}
	tw := newTable(a.stdout)
	fmt.Fprintln(tw, "SCORE\tNAME\tSOURCE\tDESCRIPTION")
	for _, r := range results {
		name := r.Winner.Skill.Name
		if r.Winner.State != "" && r.Winner.State != "active" {
			name += " (" + r.Winner.State + ")"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", r.Score, safe(name), safe(r.Winner.Source), safe(layering.Shorten(r.Winner.Skill.Description, 60)))
	}
	return tw.Flush()
}
