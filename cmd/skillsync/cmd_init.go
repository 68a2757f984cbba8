package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/internal/termtext"
)

type initOptions struct {
	force     bool
	agents    []string
	global    bool
	gitignore bool
	hooks     bool
	mcp       bool
}

func newInitCommand(a *app, runF func(context.Context, *initOptions) error) *cobra.Command {
	opts := &initOptions{}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a commented starter skillsync.yaml",
		Long: `Write a commented starter config to ./skillsync.yaml (or the file --config
names). An existing file is never overwritten unless --force is given.

--agent adds the folder that agent reads skills from in a project as a
target, to a new config or to the existing one: claude-code (or claude) adds
.claude/skills, codex .agents/skills, cursor .cursor/skills; skillsync agents
lists all of them, and '*' names every one. Agents that read the same folder
share one target. With -g (--global) init writes the user-wide config,
$XDG_CONFIG_HOME/skillsync/skillsync.yaml, whose targets are the agents' user
folders (~/.claude/skills), which every project of this user sees.

Without --agent, init looks for the agents installed here: on a terminal it
asks which to use, the found ones preselected; otherwise it names them and
the --agent line that adds them. --agent none asks for no target.

The config it writes leaves out the skills built into skillsync: its one
commented line '# - embedded: builtin' enables them. Over an existing config
init only adds what it is asked for (targets, hooks, .gitignore lines), and
with nothing to add says the config is there and exits 0; --force writes the
starter config over it, keeping the one it replaces in skillsync.yaml.bak.

With --agent claude, --hooks adds a PostToolUse hook for Claude Code's Skill
and Read tools to .claude/settings.json that runs skillsync use --hook claude,
so every skill Claude Code loads counts as a use and every read of a skill's
SKILL.md as a view, and --mcp registers skillsync mcp in .mcp.json. Nothing
is written unless every change can be: a settings file that cannot be merged
leaves skillsync.yaml as it was. Both keep every other setting, hook and server of yours, and do
nothing when the entry is there already.

Commit skillsync.yaml and skillsync.lock; the cache, the usage file and the
audit log belong to one machine. init prints the .gitignore lines that say
so, and --gitignore appends the missing ones to .gitignore.`,
		Example: `  skillsync init
  skillsync init --agent claude-code --agent codex --gitignore
  skillsync init --agent '*'
  skillsync init --agent claude --global
  skillsync init --agent claude --hooks --mcp
  skillsync init --config ~/work/skillsync.yaml`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			opts.global = a.global
			return pick(runF, a.runInit)(c.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.force, "force", false, "write the starter config over an existing one (kept in skillsync.yaml.bak)")
	cmd.Flags().StringArrayVarP(&opts.agents, "agent", "a", nil, "add this agent's skills folder as a target ('*' for every agent; see skillsync agents)")
	cmd.Flags().BoolVar(&opts.gitignore, "gitignore", false, "append the lines for skillsync's machine-local files to .gitignore")
	cmd.Flags().BoolVar(&opts.hooks, "hooks", false, "with --agent claude: record each skill Claude Code loads, through a hook in .claude/settings.json")
	cmd.Flags().BoolVar(&opts.mcp, "mcp", false, "with --agent claude: register skillsync mcp in .mcp.json")
	return cmd
}

type initJSON struct {
	Config  string `json:"config"`
	Written bool   `json:"written"`
	// Replaced is where --force kept the config it wrote over, when that
	// one was not the starter already; "" when none.
	Replaced  string            `json:"replaced,omitempty"`
	Targets   []string          `json:"targets"`
	Gitignore []string          `json:"gitignore"`
	Agent     map[string]string `json:"agent"`
}

func (a *app) runInit(_ context.Context, opts *initOptions) error {
	name, file, err := a.configFile()
	if err != nil {
		return err
	}
	if opts.global && (opts.hooks || opts.mcp || opts.gitignore) {
		return usageError("--hooks, --mcp and --gitignore are for a project, not for -g")
	}
	project := filepath.Dir(file)
	named, agents, err := explicitAgents(opts.agents)
	if err != nil {
		return err
	}
	targets, skipped, err := agent.Targets(a.env, agents, opts.global)
	if err != nil {
		return usageError("--agent: %w", err)
	}
	for _, s := range skipped {
		a.warn("agent %s %s", s, agent.WhySkipped(s, opts.global))
	}
	// Every agent settings change is computed before anything is written:
	// a settings file that cannot be merged leaves skillsync.yaml as it
	// was too.
	changes, err := agentChanges(opts, project)
	if err != nil {
		return err
	}
	out := initJSON{Config: name, Targets: []string{}, Gitignore: []string{}, Agent: map[string]string{}}
	_, statErr := os.Lstat(file)
	// Asked for nothing the config lacks: init is done already, and says
	// so (a setup script may run it twice).
	there := statErr == nil && !opts.force && len(targets) == 0 && !opts.gitignore && !opts.hooks && !opts.mcp
	if statErr != nil || opts.force {
		// A folder no config may go in is refused before any advice on
		// the agents found there, which would name a command refused
		// the same way.
		if err := config.CheckStarterFolder(a.env, project); err != nil {
			return err
		}
		if !named {
			if targets, err = a.detectTargets("init"); err != nil {
				return err
			}
		}
		kept, err := a.writeStarter(file, opts.force, named && len(targets) == 0)
		if err != nil {
			return err
		}
		out.Written, out.Replaced = true, kept
	}
	if out.Targets, err = a.addTargets(file, targets); err != nil {
		return err
	}
	for _, ch := range changes {
		if err := ch.Write(); err != nil {
			return err
		}
		out.Agent[a.shown(name, ch.Path)] = string(ch.Outcome)
	}
	cfg, err := config.LoadIn(a.env, file, skillsync.Kinds())
	if err != nil {
		return err
	}
	ignore := filepath.Join(project, ".gitignore")
	missing, err := missingIgnores(ignore, ignoreLines(cfg, file))
	if err != nil {
		return err
	}
	if opts.gitignore && len(missing) > 0 {
		if err := appendLines(ignore, missing); err != nil {
			return err
		}
		out.Gitignore = missing
	}
	if a.json {
		return writeJSON(a.stdout, out)
	}
	switch {
	case out.Replaced != "":
		fmt.Fprintf(a.stdout, "wrote %s; the one it replaced is in %s\n", name, a.shown(name, out.Replaced))
	case out.Written:
		fmt.Fprintf(a.stdout, "wrote %s\n", name)
	case there:
		fmt.Fprintf(a.stdout, "%s is there already, left as it is (skillsync init --force writes the starter config over it)\n", name)
	}
	for _, dir := range out.Targets {
		fmt.Fprintf(a.stdout, "%s: added target %s (%s)\n", name, dir, readers(targets, dir))
	}
	if len(targets) > 0 && len(out.Targets) == 0 {
		fmt.Fprintf(a.stdout, "%s: the targets were already there\n", name)
	}
	for _, path := range slices.Sorted(maps.Keys(out.Agent)) {
		fmt.Fprintf(a.stdout, "%s: %s\n", path, out.Agent[path])
	}
	switch {
	case len(out.Gitignore) > 0:
		fmt.Fprintf(a.stdout, "%s: added %s\n", a.shown(name, ignore), strings.Join(out.Gitignore, " "))
	case len(missing) > 0:
		fmt.Fprintf(a.stdout, "\nskillsync.yaml and skillsync.lock belong in git; these do not. Add to .gitignore\n(or run skillsync init --gitignore):\n  %s\n", strings.Join(missing, "\n  "))
	}
	return nil
}

// maxReplacedConfig bounds the config --force keeps before it writes
// over it: a config is a few KiB.
const maxReplacedConfig = 1 << 20

// writeStarter writes the starter config to name, replacing a file there
// only when force; noTarget marks its targets: as empty on purpose
// (--agent none), so that add does not look for agents again. A config
// it replaces that says anything else is kept first, in name.bak, whose
// path it returns: --force asks for the starter, not for the loss of an
// edited config.
func (a *app) writeStarter(name string, force, noTarget bool) (kept string, err error) {
	if _, err := os.Lstat(name); err == nil && !force {
		return "", fmt.Errorf("%s already exists; edit it, or run skillsync init --force to replace it", name)
	}
	if err := config.CheckStarterFolder(a.env, filepath.Dir(name)); err != nil {
		return "", err
	}
	if above := config.Above(filepath.Dir(name)); above != "" {
		a.warn("%s is in a folder above: this starts a second workspace in %s, its own cache, lock and targets; to add to that one, run skillsync in %s or pass --config %s",
			above, filepath.Dir(name), filepath.Dir(above), termtext.ShellArg(above))
	}
	text, err := a.starter()
	if err != nil {
		return "", err
	}
	if noTarget {
		text = config.MarkNoTarget(text)
	}
	if old, err := atomicfile.ReadBounded(name, maxReplacedConfig); err == nil && string(old) != text {
		kept = name + ".bak"
		if err := atomicfile.WriteFile(kept, old, 0o644); err != nil {
			return "", fmt.Errorf("keep the config --force replaces: %w; %s is left as it is", err, name)
		}
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read the config --force would replace: %w; move it away by hand, then run skillsync init", err)
	}
	if err := atomicfile.WriteFile(name, []byte(text), 0o644); err != nil {
		return "", fmt.Errorf("write config: %w", err)
	}
	return kept, nil
}

// ignoreLines are the lines of the .gitignore beside the config at name
// for the machine-local files of its workspace, anchored at that folder.
func ignoreLines(cfg *config.Config, name string) []string {
	l := cfg.Layout()
	base := filepath.Dir(cfg.File)
	var out []string
	for _, p := range []string{l.CacheDir() + "/", l.UsageFile() + "*", l.AuditDir() + "/", l.ImportedFile() + "*", l.HookedFile() + "*",
		l.DaemonFile() + "*", l.DaemonLockFile(), l.FleetSyncFile() + "*", l.FleetPushedFile() + "*", l.DraftLocksDir() + "/"} {
		rel, err := filepath.Rel(base, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue // outside the repository the .gitignore is in
		}
		if strings.HasSuffix(p, "/") {
			rel += "/"
		}
		out = append(out, "/"+filepath.ToSlash(rel))
	}
	return out
}

// maxIgnoreFile bounds the .gitignore read.
const maxIgnoreFile = 1 << 20

// readIgnore reads the .gitignore at name: "" when there is none, and an
// error for a link, something other than a file, or a file too large.
func readIgnore(name string) (string, error) {
	data, err := atomicfile.ReadBounded(name, maxIgnoreFile)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	return string(data), err
}

// missingIgnores returns which of lines the .gitignore at name lacks.
func missingIgnores(name string, lines []string) ([]string, error) {
	text, err := readIgnore(name)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, l := range strings.Split(text, "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var out []string
	for _, l := range lines {
		if !have[l] {
			out = append(out, l)
		}
	}
	return out, nil
}

// appendLines appends lines to the .gitignore at name, after a newline
// when the file does not end in one.
func appendLines(name string, lines []string) error {
	text, err := readIgnore(name)
	if err != nil {
		return err
	}
	add := "# skillsync: machine-local files\n" + strings.Join(lines, "\n") + "\n"
	if text != "" && !strings.HasSuffix(text, "\n") {
		add = "\n" + add
	}
	f, err := atomicfile.OpenAppend(name, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(add); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	return f.Close()
}

// readers names the agents that read the target dir.
func readers(targets []agent.Target, dir string) string {
	for _, t := range targets {
		if t.Dir == dir || t.AgentsMD == dir {
			return strings.Join(t.Agents, ", ")
		}
	}
	return ""
}

// agentChanges computes the settings changes --hooks and --mcp ask of the
// agents --agent names (every agent with such settings for '*'), writing
// nothing.
func agentChanges(opts *initOptions, project string) ([]agent.Change, error) {
	if !opts.hooks && !opts.mcp {
		return nil, nil
	}
	var regs []agent.Registration
	seen := map[string]bool{}
	for _, n := range opts.agents {
		for _, reg := range skillsync.Agents().All() {
			if seen[reg.Agent] {
				continue
			}
			if a, ok := agent.Lookup(n); n == agent.All || ok && a.Name == reg.Agent {
				seen[reg.Agent] = true
				regs = append(regs, reg)
			}
		}
	}
	var changes []agent.Change
	for _, step := range []struct {
		on   bool
		flag string
		plan func(agent.Registration) func(string) (agent.Change, error)
	}{
		{opts.hooks, "--hooks", func(r agent.Registration) func(string) (agent.Change, error) { return r.InstallHook }},
		{opts.mcp, "--mcp", func(r agent.Registration) func(string) (agent.Change, error) { return r.RegisterMCP }},
	} {
		if !step.on {
			continue
		}
		n := 0
		for _, reg := range regs {
			plan := step.plan(reg)
			if plan == nil {
				continue
			}
			ch, err := plan(project)
			if err != nil {
				return nil, err
			}
			changes = append(changes, ch)
			n++
		}
		if n == 0 {
			var can []string
			for _, reg := range skillsync.Agents().All() {
				if step.plan(reg) != nil {
					can = append(can, reg.Key)
				}
			}
			return nil, usageError("%s goes with --agent %s: it writes that agent's own settings", step.flag, strings.Join(can, " or --agent "))
		}
	}
	return changes, nil
}
