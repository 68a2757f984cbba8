package config

// Agent is an agent that reads skills from folders of its own.
type Agent struct {
	// Name is what --agent takes.
	Name string
	// Project is the folder the agent reads in a project, relative to the
	// workspace.
	Project string
}

// agents is the table of known agents.
var agents = []Agent{
	{Name: "claude", Project: ".claude/skills"},
	{Name: "codex", Project: ".agents/skills"},
	{Name: "opencode", Project: ".opencode/skills"},
}

// Agents returns the known agents in table order.
func Agents() []Agent { return append([]Agent(nil), agents...) }

// LookupAgent finds an agent by name.
func LookupAgent(name string) (Agent, bool) {
	for _, a := range agents {
		if a.Name == name {
			return a, true
		}
	}
	return Agent{}, false
}
