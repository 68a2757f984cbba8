package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
)

type initOptions struct {
	force  bool
	agents []string
}

func (a *app) initCommand() *cobra.Command {
	var opts initOptions
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a commented starter skillsync.yaml",
		Long: `Write a commented starter config to ./skillsync.yaml (or the file --config
names). An existing file is never overwritten unless --force is given.

--agent adds the directory that agent reads skills from as a target, to a new
config or to the existing one: claude (.claude/skills), codex
(.agents/skills), opencode (.opencode/skills).`,
		Example: `  skillsync init
  skillsync init --agent claude --agent codex
  skillsync init --config ~/work/skillsync.yaml`,
		Args: args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			return a.runInit(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.force, "force", false, "overwrite an existing config")
	cmd.Flags().StringArrayVar(&opts.agents, "agent", nil, "add this agent's skills directory as a target: claude, codex or opencode")
	return cmd
}

func (a *app) runInit(opts initOptions) error {
	name := a.configPath
	if name == "" {
		name = skillsync.ConfigFile
	}
	var dirs []string
	for _, agent := range opts.agents {
		dir, ok := skillsync.AgentTarget(agent)
		if !ok {
			return usageError("--agent %q: use claude, codex or opencode", agent)
		}
		dirs = append(dirs, dir)
	}
	_, statErr := os.Stat(name)
	if len(dirs) > 0 && statErr == nil && !opts.force {
		return a.addTargets(name, dirs)
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if opts.force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(name, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return &exitError{code: exitFailure, err: fmt.Errorf("%s already exists; edit it, or run skillsync init --force to replace it", name)}
	}
	if err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	if _, err := f.WriteString(skillsync.StarterConfig); err != nil {
		f.Close()
		return fmt.Errorf("write config %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write config %s: %w", name, err)
	}
	if len(dirs) > 0 {
		return a.addTargets(name, dirs)
	}
	if a.json {
		return writeJSON(a.stdout, map[string]any{"config": name, "targets": []string{}})
	}
	fmt.Fprintf(a.stdout, "wrote %s\n", name)
	return nil
}

// addTargets adds each dir to the config's targets.
func (a *app) addTargets(name string, dirs []string) error {
	added := []string{}
	for _, dir := range dirs {
		ok, err := skillsync.AddTarget(name, dir)
		if err != nil {
			return err
		}
		if ok {
			added = append(added, dir)
		}
	}
	if a.json {
		return writeJSON(a.stdout, map[string]any{"config": name, "targets": added})
	}
	for _, dir := range added {
		fmt.Fprintf(a.stdout, "%s: added target %s\n", name, dir)
	}
	if len(added) == 0 {
		fmt.Fprintf(a.stdout, "%s: the targets were already there\n", name)
	}
	return nil
}
