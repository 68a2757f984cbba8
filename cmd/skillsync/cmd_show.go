package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync/layering"
)

type showOptions struct {
	name string
}

func newShowCommand(a *app, runF func(context.Context, *showOptions) error) *cobra.Command {
	opts := &showOptions{}
	return &cobra.Command{
		Use:   "show NAME",
		Short: "Show a skill's metadata, files and where it came from",
		Long: `Show a skill's metadata, its files, and its provenance: the layer and source
it came from and the versions it shadows, with why it won.`,
		Example: `  skillsync show pdf
  skillsync show --json pdf`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, names []string) error {
			opts.name = names[0]
			return pick(runF, a.runShow)(c.Context(), opts)
		},
	}
}

type showJSON struct {
	Name          string            `json:"name"`
	Description   string            `json:"description"`
	License       string            `json:"license,omitempty"`
	Compatibility string            `json:"compatibility,omitempty"`
	Version       string            `json:"version,omitempty"`
	Author        string            `json:"author,omitempty"`
	Tags          []string          `json:"tags"`
	Triggers      []string          `json:"triggers"`
	AllowedTools  []string          `json:"allowed_tools"`
	Metadata      map[string]string `json:"metadata"`
	Extra         map[string]any    `json:"extra"`
	Layer         layering.Layer    `json:"layer"`
	Source        string            `json:"source"`
	Revision      string            `json:"revision,omitempty"`
	Path          string            `json:"path"`
	Location      string            `json:"location,omitempty"`
	Hidden        bool              `json:"hidden"`
	State         string            `json:"state"`
	Files         []fileJSON        `json:"files"`
	Shadowed      []entryJSON       `json:"shadowed"`
}

type fileJSON struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
	Mode string `json:"mode"`
}

func (a *app) runShow(ctx context.Context, opts *showOptions) error {
	eng, err := a.engine()
	if err != nil {
		return err
	}
	w, cat, err := eng.Lookup(ctx, opts.name)
	if cat != nil {
		a.reportProblems(cat.Problems)
	}
	if err != nil {
		return err
	}
	s := &w.Skill
	files := s.FileList()
	out := showJSON{
		Name: s.Name, Description: s.Description, License: s.License, Compatibility: s.Compatibility,
		Version: s.Version, Author: s.Author, Tags: orEmpty(s.Tags), Triggers: orEmpty(s.Triggers),
		AllowedTools: orEmpty(s.AllowedTools), Metadata: s.Metadata, Extra: s.Extra,
		Layer: w.Layer, Source: w.Source, Revision: w.Revision, Path: entryPath(&w.Entry),
		Location: w.Location(), Hidden: w.Hidden, State: w.State, Shadowed: shadowedJSON(w), Files: []fileJSON{},
	}
	if out.Metadata == nil {
		out.Metadata = map[string]string{}
	}
	if out.Extra == nil {
		out.Extra = map[string]any{}
	}
	for _, f := range files {
		out.Files = append(out.Files, fileJSON{Path: f.Path, Size: f.Size, Mode: fmt.Sprintf("%04o", f.Mode.Perm())})
	}
	if a.json {
		return writeJSON(a.stdout, out)
	}
	a.printShow(&out, w)
	return nil
}

func (a *app) printShow(out *showJSON, w *layering.Winner) {
	p := func(label, value string) {
		if value != "" {
			fmt.Fprintf(a.stdout, "%-14s %s\n", label+":", safe(value))
		}
	}
	p("Name", out.Name)
	p("Description", out.Description)
	p("License", out.License)
	p("Compatibility", out.Compatibility)
	p("Version", out.Version)
	p("Author", out.Author)
	p("Tags", strings.Join(out.Tags, ", "))
	p("Triggers", strings.Join(out.Triggers, "; "))
	p("Allowed tools", strings.Join(out.AllowedTools, " "))
	for _, k := range slices.Sorted(maps.Keys(out.Metadata)) {
		p("Metadata", k+"="+out.Metadata[k])
	}
	p("Layer", out.Layer.String())
	p("Source", out.Source)
	p("Revision", out.Revision)
	p("Path", out.Path)
	state := out.State
	if state == layering.Archived && w.Skill.Files == nil {
		state += " (its files are out of the cache: skillsync restore " + out.Name + " brings them back)"
	}
	p("State", state)
	if out.Hidden {
		p("Hidden", "yes (hidden: in the config)")
	}
	fmt.Fprintf(a.stdout, "\nFiles:\n")
	for _, f := range out.Files {
		fmt.Fprintf(a.stdout, "  %s %8d  %s\n", f.Mode, f.Size, safe(f.Path))
	}
	fmt.Fprintf(a.stdout, "\nProvenance:\n  %s\n", safe(why(w)))
	for _, e := range w.Shadowed {
		fmt.Fprintf(a.stdout, "  shadows %s from %s (%s)\n", safe(e.Skill.Name), safe(e.Source), e.Layer)
	}
}

// why says in words why the winner won.
func why(w *layering.Winner) string {
	if len(w.Shadowed) == 0 {
		return fmt.Sprintf("from %s (%s layer); no other source has this name", w.Source, w.Layer)
	}
	top := w.Shadowed[0]
	if top.Layer == w.Layer {
		return fmt.Sprintf("from %s (%s layer): it comes after %s in repositories:, and a later repository wins", w.Source, w.Layer, top.Source)
	}
	return fmt.Sprintf("from %s (%s layer): the %s layer wins over the %s layer", w.Source, w.Layer, w.Layer, top.Layer)
}
