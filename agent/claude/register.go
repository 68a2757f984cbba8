package claude

import (
	"os"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/internal/hostenv"
)

// AgentName is Claude Code's name in the agent table.
const AgentName = "claude-code"

// Register returns what skillsync knows of Claude Code: its transcripts,
// its PostToolUse hook, and its project settings for the hook and the MCP
// server.
func Register() agent.Registration {
	return agent.Registration{
		Agent: AgentName,
		Key:   Name,
		Importer: func(env hostenv.Env, root string) (agent.Importer, bool, error) {
			projects, err := ProjectsDir(env)
			if err != nil {
				return nil, false, err
			}
			info, err := os.Stat(projects)
			return New(root, projects), err == nil && info.IsDir(), nil
		},
		ReadHook:    ReadHook,
		InstallHook: PlanHook,
		RegisterMCP: PlanMCP,
	}
}
