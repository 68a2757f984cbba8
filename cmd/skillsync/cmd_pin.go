package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

type pinOptions struct {
	name   string
	pinned bool
}

// newPinCommand makes pin, or unpin when pinned is false.
func newPinCommand(a *app, pinned bool, runF func(context.Context, *pinOptions) error) *cobra.Command {
	opts := &pinOptions{pinned: pinned}
	use, short := "pin NAME", "Keep a skill out of curation"
	if !pinned {
		use, short = "unpin NAME", "Let curation change a pinned skill again"
	}
	return &cobra.Command{
		Use:     use,
		Short:   short,
		Example: "  skillsync " + strings.TrimSuffix(use, " NAME") + " release-notes",
		Args:    args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, names []string) error {
			opts.name = names[0]
			return pick(runF, a.runPin)(c.Context(), opts)
		},
	}
}

func (a *app) runPin(ctx context.Context, opts *pinOptions) error {
	eng, err := a.writeEngine()
	if err != nil {
		return err
	}
	name, err := eng.Pin(ctx, opts.name, opts.pinned)
	if err != nil {
		return err
	}
	if a.json {
		return writeJSON(a.stdout, map[string]any{"name": name, "pinned": opts.pinned})
	}
	fmt.Fprintf(a.stdout, "%s %s\n", map[bool]string{true: "pinned", false: "unpinned"}[opts.pinned], safe(name))
	return nil
}
