package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync/drafts"
)

type rejectOptions struct {
	name     string
	reason   string
	approver string
}

func newRejectCommand(a *app, runF func(context.Context, *rejectOptions) error) *cobra.Command {
	opts := &rejectOptions{}
	cmd := &cobra.Command{
		Use:   "reject NAME --reason R",
		Short: "Turn a draft down",
		Long: `Move the draft NAME to skills/_drafts/.rejected/NAME-<UTC stamp>/, where it
stays for reference, and record the reason in the audit log.`,
		Example: `  skillsync reject pdf --reason "duplicates the team's pdf skill"`,
		Args:    args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			opts.name = argv[0]
			if strings.TrimSpace(opts.reason) == "" {
				return usageError("reject %s: --reason is required: say why the draft is turned down", opts.name)
			}
			return pick(runF, a.runReject)(c.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.reason, "reason", "", "why the draft is turned down (required)")
	cmd.Flags().StringVar(&opts.approver, "approver", "", "who turns it down, for the audit log")
	return cmd
}

func (a *app) runReject(ctx context.Context, opts *rejectOptions) error {
	eng, err := a.writeEngine()
	if err != nil {
		return err
	}
	dst, err := eng.Gate().Reject(ctx, opts.name, drafts.RejectOptions{Reason: opts.reason, Approver: opts.approver})
	if err != nil {
		return err
	}
	if a.json {
		return writeJSON(a.stdout, map[string]string{"name": opts.name, "rejected": dst})
	}
	fmt.Fprintf(a.stdout, "rejected %s: moved to %s\n", safe(opts.name), safe(dst))
	return nil
}
