package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
)

type usageImportOptions struct {
	agent string
	since string
}

func newUsageCommand(a *app, runF func(context.Context, *usageImportOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "usage",
		Short: "Record skill usage from what agents did",
		Long: `Record skill usage from agents' own records, for agents that never call
skillsync. See also skillsync use (and its --hook) and skillsync mcp.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	opts := &usageImportOptions{}
	imp := &cobra.Command{
		Use:   "import [AGENT]",
		Short: "Import the skill uses and views in an agent's session records",
		Long: `Read an agent's session records of this workspace and record the skills it
used, at the time the record gives (source "import"; "slash" for a skill the
user started with /name). Without AGENT, every agent whose records exist on
this machine is imported. docs/usage.md says what each agent's records are.

claude reads Claude Code's transcripts: the JSONL files in
~/.claude/projects/<workspace path with every character other than a letter
or digit as -> (and of sessions started in a folder inside the workspace),
or under $CLAUDE_CONFIG_DIR/projects. A Skill call is a use, a Read of a
skill's SKILL.md (where the catalog or a target has it) a view, a /name
command naming a skill a use.

codex reads the Codex CLI's rollouts in $CODEX_HOME/sessions (~/.codex):
a skill the user names ($name) and a SKILL.md the model reads with a shell
command are uses. opencode reads OpenCode's sessions in
$XDG_DATA_HOME/opencode/storage: a skill tool call is a use, a read of a
SKILL.md a view.

Importing twice counts nothing twice: skills/.imported.json remembers how far
each record was read and which calls were counted, so a call copied into a
resumed or forked session, or read again from a rewritten transcript, or
recorded already by a hook, counts once. Events older than --since are
passed over for good. Lines that do not parse or are longer than 4 MiB are
skipped and counted, and the first few that did not parse, or lacked what a
use needs, are named by where they are (a file and an offset, or a record). Skills of plugins or of ~/.claude/skills are not this
workspace's and are counted as unknown.

--json prints one object for the AGENT named, and a list of them, one per
agent imported, without AGENT.`,
		Example: `  skillsync usage import
  skillsync usage import claude
  skillsync usage import claude --since 2026-01-01 --json`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, names []string) error {
			if len(names) == 1 {
				opts.agent = names[0]
			}
			return pick(runF, a.runUsageImport)(c.Context(), opts)
		},
	}
	imp.Flags().StringVar(&opts.since, "since", "", "pass over events before this date (2006-01-02, UTC) or RFC3339 time")
	cmd.AddCommand(imp)
	return cmd
}

// parseSince reads --since: a date (midnight UTC) or an RFC3339 time.
func parseSince(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	return time.Time{}, usageError("--since %q: want a date such as 2026-01-31 or an RFC3339 time such as 2026-01-31T09:00:00Z", s)
}

func (a *app) runUsageImport(ctx context.Context, opts *usageImportOptions) error {
	since, err := parseSince(opts.since)
	if err != nil {
		return err
	}
	if since.After(time.Now()) {
		// Every event would be passed over, and a passed-over event is
		// never read again.
		return usageError("--since %s is in the future: every event would be passed over for good; give a time that has passed", opts.since)
	}
	eng, err := a.writeEngine()
	if err != nil {
		return err
	}
	if opts.agent == "" {
		reports, err := eng.ImportAllSince(ctx, since)
		if a.json {
			if jerr := writeJSON(a.stdout, orEmpty(reports)); jerr != nil {
				return jerr
			}
		} else {
			if len(reports) == 0 && err == nil {
				fmt.Fprintf(a.stderr, "no agent's records found on this machine (%s)\n", strings.Join(skillsync.ImporterNames(), ", "))
			}
			for _, r := range reports {
				a.printImport(r)
			}
		}
		return err
	}
	imp, err := eng.Importer(opts.agent)
	if err != nil {
		return err
	}
	report, err := eng.ImportUsage(ctx, imp, since)
	if err != nil {
		return err
	}
	if a.json {
		return writeJSON(a.stdout, report)
	}
	a.printImport(report)
	return nil
}

func (a *app) printImport(r *skillsync.ImportReport) {
	fmt.Fprintf(a.stdout, "imported from %s: %s and %s from %s\n", r.Agent, plural(r.Uses, "use"), plural(r.Views, "view"),
		map[bool]string{true: "1 transcript", false: fmt.Sprintf("%d transcripts", r.Files)}[r.Files == 1])
	if len(r.Reactivated) > 0 {
		fmt.Fprintf(a.stdout, "active again: %s\n", safe(strings.Join(r.Reactivated, ", ")))
	}
	for _, u := range r.Unreadable {
		a.warn("passed over, tried again next time: %s", safe(u))
	}
	if a.quiet {
		return
	}
	if r.Unknown > 0 {
		names := make([]string, len(r.UnknownNames))
		for i, n := range r.UnknownNames {
			names[i] = safe(n)
		}
		fmt.Fprintf(a.stderr, "not recorded, no skill of this workspace: %s (%s)\n", strings.Join(names, ", "), plural(r.Unknown, "event"))
	}
	if r.Duplicates > 0 {
		fmt.Fprintf(a.stderr, "%s counted before (copied into another session, read again, or counted by the workspace this one is nested in), not counted again\n", plural(r.Duplicates, "call"))
	}
	if r.Hooked > 0 {
		fmt.Fprintf(a.stderr, "%s recorded already by the hook, not counted again\n", plural(r.Hooked, "call"))
	}
	if r.Rewritten > 0 {
		fmt.Fprintf(a.stderr, "%s no longer began as imported before and were read again from the start\n", plural(r.Rewritten, "transcript"))
	}
	if r.Malformed > 0 {
		fmt.Fprintf(a.stderr, "skipped %s that did not parse or lacked what a use needs, first at %s\n",
			plural(r.Malformed, "line"), safe(strings.Join(r.MalformedAt, ", ")))
	}
	if r.TooLong > 0 {
		fmt.Fprintf(a.stderr, "skipped %s longer than 4 MiB\n", plural(r.TooLong, "line"))
	}
	if r.Before > 0 {
		fmt.Fprintf(a.stderr, "passed over %s before --since\n", plural(r.Before, "event"))
	}
	if r.Future > 0 {
		fmt.Fprintf(a.stderr, "passed over %s dated more than a day past this machine's clock\n", plural(r.Future, "event"))
	}
}
