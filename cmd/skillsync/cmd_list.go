package main

import (
	"context"
	"fmt"
	"sort"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/layering"
)

type listOptions struct {
	all bool
}

func newListCommand(a *app, runF func(context.Context, *listOptions) error) *cobra.Command {
	opts := &listOptions{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the skills that won their name",
		Long: `List the skills of the merged catalog: for each name, the version from the
highest layer (user > workspace > marketplace > global), with its curation
state when it is not active. Marketplace skills are listed as the last sync
wrote them into .skills-cache/: what agents read.

Hidden and archived skills are left out unless --all is given; --all also
lists the archived copies of local skills and the skills this host does not
take yet by their staged rollout (metadata.rollout, metadata.environments),
with the reason.`,
		Example: `  skillsync list
  skillsync list --all --json`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return pick(runF, a.runList)(c.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.all, "all", false, "include hidden and archived skills")
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
	State       string         `json:"state"`
	// HeldBack says why this host does not take the skill (staged
	// rollout); only list --all shows such skills.
	HeldBack string      `json:"held_back,omitempty"`
	Shadowed []entryJSON `json:"shadowed"`
}

func (a *app) runList(ctx context.Context, opts *listOptions) error {
	eng, cat, err := a.catalog(ctx)
	if err != nil {
		return err
	}
	winners := cat.Visible()
	if opts.all {
		winners = cat.Winners
	}
	out := make([]listEntry, 0, len(winners))
	for _, w := range winners {
		out = append(out, listEntry{
			Name: w.Skill.Name, Description: w.Skill.Description,
			Layer: w.Layer, Source: w.Source, Path: entryPath(&w.Entry), Revision: w.Revision,
			Hidden: w.Hidden, State: w.State, Shadowed: shadowedJSON(w),
		})
	}
	if opts.all {
		out = append(out, archivedEntries(eng, cat)...)
		for _, h := range cat.Held {
			out = append(out, listEntry{Name: h.Skill.Name, Description: h.Skill.Description, Layer: h.Layer, Source: h.Source,
				Path: entryPath(&h.Entry), Revision: h.Revision, State: "held back", HeldBack: h.Reason, Shadowed: []entryJSON{}})
		}
	}
	if a.json {
		return writeJSON(a.stdout, out)
	}
	tw := newTable(a.stdout)
	fmt.Fprintln(tw, "NAME\tLAYER\tSOURCE\tDESCRIPTION")
	for _, e := range out {
		name := e.Name
		if e.Hidden {
			name += " (hidden)"
		}
		switch {
		case e.HeldBack != "":
			name += " (held back: " + e.HeldBack + ")"
		case e.State != "" && e.State != "active":
			name += " (" + e.State + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", safe(name), e.Layer, safe(e.Source), safe(layering.Shorten(e.Description, 60)))
	}
	return tw.Flush()
}

// archivedEntries lists the newest archived copy of each local skill
// whose name the catalog no longer has.
func archivedEntries(eng *skillsync.Engine, cat *layering.Catalog) []listEntry {
	var out []listEntry
	seen := map[string]bool{}
	for _, c := range eng.ArchivedCopies() {
		key := layering.Key(c.Name)
		if _, inCatalog := cat.Lookup(c.Name); inCatalog || seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, listEntry{Name: c.Name, Layer: c.Layer, Source: c.Layer.String(), Path: c.Dir,
			State: "archived", Shadowed: []entryJSON{}})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
