// Package all lists the agent packages skillsync is built with: their
// usage importers, hooks and settings. It is the one place that names
// them: adding an agent's importer, hook or settings is one package under
// agent/ and one line here; its folders are a row of the table in
// agent/table.go.
package all

import (
	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/agent/claude"
	"github.com/skillsync/skillsync/agent/codex"
	"github.com/skillsync/skillsync/agent/opencode"
)

// registrations is the explicit list of the agent packages, in the order
// commands list them.
func registrations() []agent.Registration {
	return []agent.Registration{
		claude.Register(),
		codex.Register(),
		opencode.Register(),
	}
}

// Agents returns the registry of the agents whose records, hooks and
// settings skillsync knows. Each call builds a new one: there is no
// package-level registry to change.
func Agents() *agent.Registry {
	r, err := agent.NewRegistry(registrations()...)
	if err != nil {
		panic(err) // the list above is fixed; TestAgentsRegistry checks it
	}
	return r
}
