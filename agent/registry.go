package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skillsync/skillsync/internal/hostenv"
)

// Outcome says what a registration in an agent's settings did.
type Outcome string

// What a registration can do.
const (
	// Added: the entry was written.
	Added Outcome = "added"
	// Present: the entry was there already; nothing was written.
	Present Outcome = "present"
	// Kept: an entry of that name with other settings was there; it was
	// left as the user has it and nothing was written.
	Kept Outcome = "kept"
)

// Change is one file an agent's settings need, computed before anything
// is written so that a command can write all of its changes or none.
type Change struct {
	// Path is the file; Outcome what writing Data there does. Data is nil
	// unless Outcome is Added.
	Path    string
	Outcome Outcome
	Data    []byte
	// old is the file as read (nil for none), perm its mode, max the
	// bound of the read.
	old  []byte
	perm fs.FileMode
	max  int64
}

// Registration is what one agent's package gives skillsync, keyed by the
// agent's row in the table. Every function is optional: an agent has the
// abilities its package fills in.
type Registration struct {
	// Agent is the agent's name in the table (Agents).
	Agent string
	// Key is the agent's name in the workspace's import state and hook
	// journal, and the name its importer and hook report ("claude" for
	// claude-code). Commands take it besides the table's names.
	Key string
	// Importer returns the importer of the agent's records of the
	// workspace at root, and whether the agent keeps records on this
	// machine at all (its folder exists), reading the user's folders from
	// env.
	Importer func(env hostenv.Env, root string) (imp Importer, found bool, err error)
	// ReadHook reads what the agent's hook gets on stdin and returns the
	// event it reports; ErrNoSkill for a call that uses no skill. env is
	// the environment the hook runs in.
	ReadHook func(env hostenv.Env, r io.Reader) (Event, error)
	// InstallHook returns the change that registers the hook in the
	// project's settings.
	InstallHook func(project string) (Change, error)
	// RegisterMCP returns the change that registers skillsync's MCP
	// server in the project's settings.
	RegisterMCP func(project string) (Change, error)
}

// Registry is the agents whose records, hooks or settings skillsync
// knows. The program builds it from an explicit list of registrations,
// one per agent package; there is no global registry.
type Registry struct {
	regs []Registration
}

// NewRegistry returns the registry of regs. Each must name an agent of
// the table, and no two the same agent or key.
func NewRegistry(regs ...Registration) (*Registry, error) {
	seen := map[string]bool{}
	for _, r := range regs {
		a, ok := Lookup(r.Agent)
		if !ok || a.Name != r.Agent {
			return nil, fmt.Errorf("registration of %q: no such agent in the table", r.Agent)
		}
		if r.Key == "" {
			return nil, fmt.Errorf("registration of %s: no key", r.Agent)
		}
		names := []string{r.Agent}
		if r.Key != r.Agent {
			names = append(names, r.Key)
		}
		for _, k := range names {
			if seen[k] {
				return nil, fmt.Errorf("registration of %s: %s registered twice", r.Agent, k)
			}
			seen[k] = true
		}
	}
	return &Registry{regs: slices.Clone(regs)}, nil
}

// All returns the registrations in the order given.
func (r *Registry) All() []Registration { return slices.Clone(r.regs) }

// Lookup finds the registration of an agent by key, table name or alias,
// ignoring case.
func (r *Registry) Lookup(name string) (Registration, bool) {
	canon := name
	if a, ok := Lookup(name); ok {
		canon = a.Name
	}
	for _, reg := range r.regs {
		if strings.EqualFold(reg.Key, name) || reg.Agent == canon {
			return reg, true
		}
	}
	return Registration{}, false
}

// Keys returns the keys of the registrations that have what has says,
// in the order given: the names a command offers.
func (r *Registry) Keys(has func(Registration) bool) []string {
	var out []string
	for _, reg := range r.regs {
		if has(reg) {
			out = append(out, reg.Key)
		}
	}
	return out
}

// Readers returns the keys of the agents of r that look for skills in
// dir, a folder of the project at root: the agent's Project or Also
// folder there.
func (r *Registry) Readers(root, dir string) []string {
	dir = filepath.Clean(dir)
	var out []string
	for _, reg := range r.regs {
		a, _ := Lookup(reg.Agent)
		for _, p := range append([]string{a.Project}, a.Also...) {
			if p != "" && filepath.Join(root, filepath.FromSlash(p)) == dir {
				out = append(out, reg.Key)
				break
			}
		}
	}
	return out
}

// Importer returns the importer of the named agent's records of the
// workspace at root, the user's folders read from env.
func (r *Registry) Importer(env hostenv.Env, name, root string) (Importer, error) {
	reg, ok := r.Lookup(name)
	if !ok || reg.Importer == nil {
		return nil, fmt.Errorf("%w: %q; the agents whose records skillsync reads are %s", errNoImporter, name,
			strings.Join(r.Keys(func(g Registration) bool { return g.Importer != nil }), ", "))
	}
	imp, _, err := reg.Importer(env, root)
	return imp, err
}

// ImportAll imports, with j, the records of every agent of r that keeps
// records on this machine (the workspace at root, the user's folders read
// from env) and returns a report per agent: as Journal.Import does, each
// into the recorder rec makes for it. An agent that fails does not stop
// the others; the errors are joined, each naming its agent.
func (r *Registry) ImportAll(ctx context.Context, j Journal, env hostenv.Env, root string, rec func(context.Context) (Recorder, error), since time.Time) ([]*Report, error) {
	var reports []*Report
	var errs []error
	for _, reg := range r.regs {
		if reg.Importer == nil {
			continue
		}
		imp, found, err := reg.Importer(env, root)
		if err == nil && !found {
			continue
		}
		if err == nil {
			var rc Recorder
			if rc, err = rec(ctx); err == nil {
				var rep *Report
				if rep, err = j.Import(ctx, rc, imp, since); rep != nil {
					reports = append(reports, rep)
				}
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", reg.Key, err))
		}
	}
	return reports, errors.Join(errs...)
}
