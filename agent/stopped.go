package agent

import (
	"maps"
	"slices"
	"strings"
	"time"
)

// lastImports is what the checks of an import before it reads anything
// ask of the usage file: the last import of each agent's records it names.
type lastImports interface {
	LastImport(agent string) (string, error)
}

// named is a usage file's imports (curator.Usage.Imports), per agent the
// id of its last import; HookMark names the last call a hook recorded.
type named map[string]string

func (n named) LastImport(agent string) (string, error) { return n[agent], nil }

// Stopped says, reading only, which agents' imports stop as the
// workspace's files stand, each with the error the import gives and its
// fix (an import --since): an agent the usage file names an import of
// (imports, the usage file's) whose marks the import state at statePath
// lacks, or holds from before that import, and the agent whose hook the
// usage file names a call of while the hooks' journal at hookedPath is
// gone. An agent with an import left pending is passed over: the next
// import settles it first. A state that cannot be read is its error.
// What only reading the agents' records tells (a journal that lacks
// calls) is not checked.
func Stopped(statePath, hookedPath string, imports map[string]string) []error {
	if len(imports) == 0 {
		return nil // no import or hook counted here: none stops
	}
	state, err := LoadState(statePath)
	if err != nil {
		return []error{err}
	}
	rec := named(imports)
	var out []error
	for _, agent := range slices.Sorted(maps.Keys(imports)) {
		if agent == HookMark || state.Pending[agent] != nil {
			continue
		}
		if err := lostState(state, rec, agent, statePath, time.Time{}); err != nil {
			out = append(out, err)
			continue
		}
		if _, err := olderState(state, rec, agent, statePath, time.Time{}); err != nil {
			out = append(out, err)
		}
	}
	if call, _ := parseMarker(imports[HookMark]); call != "" {
		agent, _, _ := strings.Cut(call, " ")
		if state.Pending[agent] == nil {
			if _, err := lostJournal(hookedPath, rec, agent, time.Time{}); err != nil {
				out = append(out, err)
			}
		}
	}
	return out
}
