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
	force bool
}

func (a *app) initCommand() *cobra.Command {
	var opts initOptions
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a commented starter skillsync.yaml",
		Long: `Write a commented starter config to ./skillsync.yaml (or the file --config
names). An existing file is never overwritten unless --force is given.`,
		Example: `  skillsync init
  skillsync init --config ~/work/skillsync.yaml`,
		Args: args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			return a.runInit(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.force, "force", false, "overwrite an existing config")
	return cmd
}

func (a *app) runInit(opts initOptions) error {
	name := a.configPath
	if name == "" {
		name = skillsync.ConfigFile
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
	if a.json {
		return writeJSON(a.stdout, map[string]string{"config": name})
	}
	fmt.Fprintf(a.stdout, "wrote %s\n", name)
	return nil
}
