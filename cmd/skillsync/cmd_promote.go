package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync/drafts"
)

type promoteOptions struct {
	name         string
	approver     string
	to           string
	message      string
	branch       string
	canary       string
	environments string
}

func newPromoteCommand(a *app, runF func(context.Context, *promoteOptions) error) *cobra.Command {
	opts := &promoteOptions{}
	cmd := &cobra.Command{
		Use:   "promote NAME --approver WHO",
		Short: "Let a draft through the promotion gate, into a layer or a git source",
		Long: `Promote the draft NAME, approved by WHO: no approver, no promotion.

The gate's policy is promotion: in the config. An approver outside
promotion.approvers, or a target outside promotion.targets, is refused
(exit 1). Without a promotion: section any named approver may promote, into
the workspace and user layers only. The draft is then validated strictly
and refused with every problem named; a refused draft stays in the drafts.

--to workspace (the default) or user moves the draft into that layer in one
rename. A skill of that name already in the layer is archived first, never
deleted: skillsync restore NAME brings it back once the new one is moved away.

--to SOURCE, a git source, commits the skill under the source's path (or
where a skill of that name already is) on top of the revision this workspace
has, with the approver and the message in the commit, and pushes it with
the source's own auth to a new branch skillsync/NAME (or --branch), for a
review; the branch and the commit are printed. With publish: direct on the
source, it pushes to the tracked branch instead, as a fast-forward only: when
the remote moved on, it is refused and the draft stays (run skillsync sync,
check with skillsync drafts diff NAME, promote again). A published draft
moves to skills/_drafts/.published/. Other kinds of source are not supported.

Every promotion is a line of the audit log with the approver, the skill
hash and, for git, the commit.`,
		Example: `  skillsync promote pdf --approver alice
  skillsync promote pdf --approver alice --to user
  skillsync promote pdf --approver alice --to team --message "Add the PDF skill"
  skillsync promote pdf --approver alice --to team --canary 10% --environments prod`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			opts.name = argv[0]
			return pick(runF, a.runPromote)(c.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.approver, "approver", "", "who approves the promotion (required; see promotion.approvers)")
	cmd.Flags().StringVar(&opts.to, "to", "workspace", "where the draft goes: workspace, user or a git source's name")
	cmd.Flags().StringVarP(&opts.message, "message", "m", "", "the commit message for a git source, a note in the audit log otherwise")
	cmd.Flags().StringVar(&opts.branch, "branch", "", "for a git source, the new branch to push to (default skillsync/NAME)")
	cmd.Flags().StringVar(&opts.canary, "canary", "", "stage the skill: only this share of hosts take it (metadata.rollout, e.g. 10%); skillsync rollout raises it")
	cmd.Flags().StringVar(&opts.environments, "environments", "", "with --canary, only hosts of these environments take it (metadata.environments, e.g. \"prod staging\")")
	return cmd
}

func (a *app) runPromote(ctx context.Context, opts *promoteOptions) error {
	if strings.TrimSpace(opts.approver) == "" {
		// A flag left out is usage (exit 2), as reject without --reason
		// is; the gate's refusals of an approver it has are exit 1.
		return usageError("promote %s: --approver WHO is required: a person approves every promotion", opts.name)
	}
	eng, err := a.writeEngine()
	if err != nil {
		return err
	}
	p, err := eng.Gate().Promote(ctx, opts.name, drafts.PromoteOptions{Approver: opts.approver, To: opts.to, Message: opts.message, Branch: opts.branch,
		Rollout: opts.canary, Environments: environmentList(opts.environments)})
	if err != nil {
		return err
	}
	a.noteIgnored("promoted "+p.Name, p.Ignored)
	if a.json {
		return writeJSON(a.stdout, p)
	}
	printPromotion(a, p, false)
	return nil
}

// printPromotion says what a promotion did, for promote and for
// propose's automatic one.
func printPromotion(a *app, p *drafts.Promotion, auto bool) {
	how := "approved by " + safe(p.Approver)
	if auto {
		how = "automatically, promotion.auto"
	}
	if p.Commit == "" {
		fmt.Fprintf(a.stdout, "promoted %s to %s: %s (%s)\n", safe(p.Name), safe(p.Target), safe(p.Dir), how)
		if p.Archived != "" {
			fmt.Fprintf(a.stdout, "the skill it replaced is archived in %s; skillsync restore %s brings it back once %s is moved away\n",
				safe(p.Archived), safe(p.Name), safe(p.Dir))
		}
		return
	}
	if p.Unchanged {
		fmt.Fprintf(a.stdout, "%s holds %s as the draft has it already, at %s: nothing to publish (%s)\n", safe(p.Target), safe(p.Name), shortRev(p.Commit), how)
		if p.Published != "" {
			fmt.Fprintf(a.stdout, "the draft moved to %s\n", safe(p.Published))
		}
		return
	}
	fmt.Fprintf(a.stdout, "published %s to %s (%s)\nbranch: %s\ncommit: %s\n", safe(p.Name), safe(p.Target), how, safe(p.Branch), p.Commit)
	if !p.Direct {
		fmt.Fprintf(a.stdout, "open a review of branch %s to merge it; the skill comes to every workspace with the next sync after that\n", safe(p.Branch))
	}
}
