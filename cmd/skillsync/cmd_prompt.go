package main

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/layering"
)

type promptOptions struct {
	format       string
	maxChars     int
	excludeStale bool
}

func newPromptCommand(a *app, runF func(context.Context, *promptOptions) error) *cobra.Command {
	opts := &promptOptions{}
	cmd := &cobra.Command{
		Use:   "prompt",
		Short: "Render the skills for an agent's system prompt",
		Long: `Render the available skills for an agent's system prompt, as XML (the
<available_skills> block agents expect) or JSON.

Hidden and archived skills, and skills whose frontmatter sets
disable-model-invocation, are left out; --exclude-stale leaves out stale ones. --max-chars keeps the output within a budget: descriptions are cut
to 200 characters first, then the last skills are dropped and a final line
says how many. A budget below the empty list and that line gets them.`,
		Example: `  skillsync prompt
  skillsync prompt --format json --max-chars 8000`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return pick(runF, a.runPrompt)(c.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.format, "format", "xml", "xml or json")
	cmd.Flags().IntVar(&opts.maxChars, "max-chars", 0, "keep the output within this many characters, the empty list at least (0: no limit)")
	cmd.Flags().BoolVar(&opts.excludeStale, "exclude-stale", false, "leave out skills the curator marked stale")
	return cmd
}

func (a *app) runPrompt(ctx context.Context, opts *promptOptions) error {
	format := layering.PromptFormat(opts.format)
	if a.json {
		format = layering.PromptJSON
	}
	if format != layering.PromptXML && format != layering.PromptJSON {
		return usageError("--format %q: use xml or json", opts.format)
	}
	if opts.maxChars < 0 {
		return usageError("--max-chars must not be negative")
	}
	_, cat, err := a.catalog(ctx)
	if err != nil {
		return err
	}
	winners := layering.PromptSkills(cat.Winners)
	if opts.excludeStale {
		winners = slices.DeleteFunc(winners, func(w *layering.Winner) bool { return w.State == string(curator.Stale) })
	}
	out, err := layering.Prompt(winners, format, opts.maxChars)
	if err != nil {
		return fmt.Errorf("render prompt: %w", err)
	}
	_, err = io.WriteString(a.stdout, out)
	return err
}
