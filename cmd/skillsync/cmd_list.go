package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync/layering"
)

type listOptions struct {
	all bool
}

func (a *app) listCommand() *cobra.Command {
	var opts listOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the skills that won their name",
		Long: `List the skills of the merged catalog: for each name, the version from the
highest layer (user > workspace > marketplace > global).

Hidden skills are left out unless --all is given.`,
		Example: `  skillsync list
  skillsync list --all --json`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return a.runList(c.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.all, "all", false, "include hidden skills")
	return cmd
}

type listEntry struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Layer       layering.Layer `json:"layer"`
	Source      string         `json:"source"`
	Path        string         `json:"path"`
	Revision    string         `json:"revision,omitempty"`
	Hidden      bool           `json:"hidden,omitempty"`
	Shadowed    []entryJSON    `json:"shadowed"`
}

func (a *app) runList(ctx context.Context, opts listOptions) error {
	_, cat, err := a.catalog(ctx)
	if err != nil {
		return err
	}
	winners := cat.Visible()
	if opts.all {
		winners = cat.Winners
	}
	if a.json {
		out := make([]listEntry, 0, len(winners))
		for _, w := range winners {
			out = append(out, listEntry{
				Name: w.Skill.Name, Description: w.Skill.Description,
				Layer: w.Layer, Source: w.Source, Path: entryPath(&w.Entry), Revision: w.Revision,
				Hidden: w.Hidden, Shadowed: shadowedJSON(w),
			})
		}
		return writeJSON(a.stdout, out)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tLAYER\tSOURCE\tDESCRIPTION")
	for _, w := range winners {
		name := w.Skill.Name
		if w.Hidden {
			name += " (hidden)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, w.Layer, w.Source, shorten(w.Skill.Description, 60))
	}
	return tw.Flush()
}
