package skillsync

import (
	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/agent/all"
)

// Agents returns the registry of the agents whose records, hooks and
// settings skillsync knows (agent/all lists them).
func Agents() *agent.Registry { return all.Agents() }
