package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync/drafts"
)

// environmentList splits --environments; "" is none (nil).
func environmentList(s string) []string {
	f := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' })
	if len(f) == 0 {
		return nil
	}
	return f
}

type rolloutOptions struct {
	name, percent    string
	approver, branch string
}

func newRolloutCommand(a *app, runF func(context.Context, *rolloutOptions) error) *cobra.Command {
	opts := &rolloutOptions{}
	cmd := &cobra.Command{
		Use:   "rollout NAME PERCENT",
		Short: "Change the share of hosts that take a staged marketplace skill",
		Long: `Set the marketplace skill NAME's metadata.rollout to PERCENT in its source,
published the way skillsync promote publishes: a review branch, or with
publish: direct the tracked branch. A host takes a staged skill when its
environment is in metadata.environments (or none are listed) and a stable
hash of its host id (in the canonical form the fleet keys it by: Build-01
is build-01) and the skill's name falls under the percentage, so a host in
at 10% stays in at 50%. skillsync list --all shows, on each host,
the staged skills it does not take and why. Where the config sets them, the
approver (--approver, else the user running it) must be in
promotion.approvers and the source in promotion.targets.`,
		Example: `  skillsync rollout pdf 50%
  skillsync rollout pdf 100% --approver alice`,
		Args: args(cobra.ExactArgs(2)),
		RunE: func(c *cobra.Command, argv []string) error {
			opts.name, opts.percent = argv[0], argv[1]
			return pick(runF, a.runRollout)(c.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.approver, "approver", "", "the commit's author (default the user running skillsync)")
	cmd.Flags().StringVar(&opts.branch, "branch", "", "the new branch to push to (default skillsync/NAME-rollout-PERCENT)")
	return cmd
}

func (a *app) runRollout(ctx context.Context, opts *rolloutOptions) error {
	eng, err := a.engine()
	if err != nil {
		return err
	}
	res, err := eng.Gate().Rollout(ctx, opts.name, opts.percent, drafts.RolloutOptions{Approver: opts.approver, Branch: opts.branch})
	if err != nil {
		return err
	}
	if a.json {
		return writeJSON(a.stdout, res)
	}
	if res.Unchanged {
		fmt.Fprintf(a.stdout, "%s is rolled out to %s of hosts already: source %s holds it so at %s; nothing published\n", safe(res.Name), res.Rollout, safe(res.Source), safe(short(res.Commit)))
		return nil
	}
	where := "review branch " + res.Branch
	if res.Direct {
		where = "tracked branch " + res.Branch
	}
	if res.Branch == "" {
		where = "source " + res.Source
	}
	fmt.Fprintf(a.stdout, "rolled out %s to %s of hosts: %s, commit %s\n", safe(res.Name), res.Rollout, safe(where), safe(short(res.Commit)))
	return nil
}
