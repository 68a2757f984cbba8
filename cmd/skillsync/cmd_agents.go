package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync/agent"
)

type agentsOptions struct{}

func newAgentsCommand(a *app, runF func(context.Context, *agentsOptions) error) *cobra.Command {
	opts := &agentsOptions{}
	cmd := &cobra.Command{
		Use:   "agents",
		Short: "List the agents skillsync can place skills for, and the ones found here",
		Long: `List every agent --agent takes (init --agent, add --agent): its name and
aliases, the folder it reads skills from in a project, and the one it reads
for its user on every project (what --global targets). FOUND marks the agents
that look installed for this user: their user folder or their own
configuration folder exists.

Agents that read the same folder (Codex, Gemini CLI, GitHub Copilot and
others read .agents/skills) share one target.`,
		Example: `  skillsync agents
  skillsync agents --json | jq -r '.[] | select(.found) | .name'
  skillsync init --agent claude-code --agent codex
  skillsync init --agent '*' --global`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return pick(runF, a.runAgents)(c.Context(), opts)
		},
	}
	return cmd
}

type agentJSON struct {
	Name    string   `json:"name"`
	Aliases []string `json:"aliases"`
	Display string   `json:"display_name"`
	Project string   `json:"project_dir"`
	// AgentsMD is the project file an agent that reads no skills folder
	// gets the list of skills in (an agents_md: target).
	AgentsMD string `json:"agents_md,omitempty"`
	// User is the user folder as the config gets it (~/...), UserDir the
	// same folder absolute.
	User    string `json:"user"`
	UserDir string `json:"user_dir"`
	Found   bool   `json:"found"`
}

func (a *app) runAgents(_ context.Context, _ *agentsOptions) error {
	var out []agentJSON
	for _, ag := range agent.Agents() {
		dir, err := ag.UserDir(a.env)
		if err != nil {
			return err
		}
		user, err := ag.UserTarget(a.env)
		if err != nil {
			return err
		}
		out = append(out, agentJSON{Name: ag.Name, Aliases: orEmpty(ag.Aliases), Display: ag.Display,
			Project: ag.Project, AgentsMD: ag.AgentsMD, User: user, UserDir: dir, Found: ag.Installed(a.env)})
	}
	if a.json {
		return writeJSON(a.stdout, out)
	}
	tw := newTable(a.stdout)
	fmt.Fprintln(tw, "AGENT\tNAME\tPROJECT\tUSER (--global)\tFOUND")
	found := 0
	for _, ag := range out {
		mark := ""
		if ag.Found {
			mark = "yes"
			found++
		}
		name := ag.Name
		if len(ag.Aliases) > 0 {
			name += " (" + strings.Join(ag.Aliases, ", ") + ")"
		}
		project := ag.Project
		if ag.AgentsMD != "" {
			project = ag.AgentsMD + " (agents_md)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", name, ag.Display, project, ag.User, mark)
	}
	tw.Flush()
	fmt.Fprintf(a.stderr, "%s known, %d found on this machine\n", plural(len(out), "agent"), found)
	return nil
}
