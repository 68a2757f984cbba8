package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync/drafts"
)

type publishOptions struct {
	dir    string
	to     string
	author string
}

func newPublishCommand(a *app, runF func(context.Context, *publishOptions) error) *cobra.Command {
	opts := &publishOptions{}
	cmd := &cobra.Command{
		Use:   "publish DIR --to SOURCE",
		Short: "Write a skill into a postgres source",
		Long: `Write the skill in DIR into the postgres source SOURCE of the config, in one
transaction, and print the source's new revision. The skill's name is DIR's
name. It must pass strict validation (every warning is an error): otherwise
nothing is written, each problem is printed, and the exit status is 1.
Publishing the same files again changes nothing and prints the current
revision. Publishes of the same source run one after the other, never
interleaved.

DIR is read as sync reads it: what git ignores there (a .env,
node_modules/), or outside a work tree what DIR's own .gitignore files
name, is not published, and a note on stderr names it. A DIR git ignores
as a whole is published with a warning naming the rule.

Every skillsync daemon whose config has the source syncs it as the change
commits; other workspaces see it at their next sync.

Exit status: 0 published, 1 not valid or not written, 2 bad usage (SOURCE is
not a postgres source of the config).`,
		Example: `  skillsync publish skills/release-notes --to team
  skillsync publish ./pdf --to team --author alice --json`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, dirs []string) error {
			opts.dir = dirs[0]
			return pick(runF, a.runPublish)(c.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.to, "to", "", "the postgres source to write to (required)")
	cmd.Flags().StringVar(&opts.author, "author", "", "who the change is recorded as made by (default: the user running skillsync)")
	return cmd
}

// publishOutput is publish's JSON: the result, or the problems that kept
// the skill out.
type publishOutput struct {
	drafts.PublishResult
	Published bool              `json:"published"`
	Problems  []validateProblem `json:"problems"`
}

func (a *app) runPublish(ctx context.Context, opts *publishOptions) error {
	if opts.to == "" {
		return usageError("publish: --to SOURCE is required\nRun 'skillsync publish --help' for usage")
	}
	eng, err := a.engine()
	if err != nil {
		return err
	}
	dir, err := a.abs(opts.dir)
	if err != nil {
		return err
	}
	res, err := eng.Gate().Publish(ctx, dir, opts.to, opts.author)
	var invalid *drafts.InvalidSkillError
	if errors.As(err, &invalid) {
		return a.publishRefused(invalid)
	}
	if err != nil {
		return err
	}
	a.noteIgnored("published "+res.Skill, res.Ignored)
	if a.json {
		return writeJSON(a.stdout, publishOutput{PublishResult: res, Published: true, Problems: []validateProblem{}})
	}
	fmt.Fprintf(a.stdout, "published %s to %s at revision %s\n", safe(res.Skill), safe(res.Source), safe(res.Revision))
	return nil
}

// publishRefused prints why a skill was not published and ends with
// status 1.
func (a *app) publishRefused(invalid *drafts.InvalidSkillError) error {
	if a.json {
		out := publishOutput{PublishResult: drafts.PublishResult{Source: invalid.Source, Skill: invalid.Skill}, Problems: []validateProblem{}}
		for _, p := range invalid.Problems {
			out.Problems = append(out.Problems, validateProblem{Level: p.Level, Rule: p.Rule, Message: p.Message, Line: p.Line, File: p.File})
		}
		if err := writeJSON(a.stdout, out); err != nil {
			return err
		}
		return reported(errInvalid)
	}
	for _, p := range invalid.Problems {
		fmt.Fprintln(a.stderr, p.String())
	}
	a.logError(fmt.Sprintf("%s not published to %s: %s under strict validation", safe(invalid.Skill), safe(invalid.Source), plural(len(invalid.Problems), "problem")))
	return reported(errInvalid)
}

// noteIgnored says, on stderr, what git ignores in the folder read and
// was left out of what was done with it, so that a .env missing from a
// publication is no surprise; nothing when nothing was left out. what
// is what was done ("published", ...).
func (a *app) noteIgnored(what string, ig drafts.Ignored) {
	if ig.Whole != nil && !a.quiet {
		msg := ig.Whole.Problem().Message
		if l := a.jsonLog(); l != nil {
			l.Warn(msg)
		} else {
			fmt.Fprintf(a.stderr, "warning: %s\n", safe(msg))
		}
	}
	list := ig.String()
	if list == "" || a.quiet {
		return
	}
	msg := fmt.Sprintf("%s without what git ignores in its folder, which a sync leaves out too: %s", what, list)
	if l := a.jsonLog(); l != nil {
		l.Info(msg)
		return
	}
	fmt.Fprintf(a.stderr, "note: %s\n", safe(msg))
}
