package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/hostenv"
)

// globalDirs returns the user-wide config file of -g and its workspace,
// where the cache and the lock go: $XDG_CONFIG_HOME/skillsync/skillsync.yaml
// and $XDG_DATA_HOME/skillsync (~/.config and ~/.local/share when unset or
// not absolute, on every system).
func globalDirs(env hostenv.Env) (file, data string, err error) {
	home, err := env.HomeDir()
	if err != nil {
		return "", "", fmt.Errorf("-g: find the home directory: %w", err)
	}
	xdg := func(key, def string) string {
		if v := env.Getenv(key); filepath.IsAbs(v) {
			return v
		}
		return filepath.Join(home, def)
	}
	return filepath.Join(xdg("XDG_CONFIG_HOME", ".config"), "skillsync", config.FileName),
		filepath.Join(xdg("XDG_DATA_HOME", filepath.Join(".local", "share")), "skillsync"), nil
}

// useGlobal points every command at the user-wide config when -g is
// given: the current folder's config and $SKILLSYNC_CONFIG are not read,
// so a project workspace and the global one never mix.
func (a *app) useGlobal(c *cobra.Command, _ []string) error {
	if !a.global {
		return nil
	}
	if a.configPath != "" {
		return usageError("-g and --config name two configs: give one")
	}
	file, _, err := globalDirs(a.env)
	if err != nil {
		return err
	}
	a.configPath = file
	if c.Name() == "init" || c.Name() == "add" {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return fmt.Errorf("-g: make the config folder: %w", err)
		}
		return nil
	}
	if _, err := os.Lstat(file); err != nil {
		return usageError("no global config at %s yet: skillsync -g add SOURCE or skillsync -g init writes it", file)
	}
	return nil
}

// starter is the config init and add write: with -g its workspace is the
// user's data folder, so the cache and the lock go there.
func (a *app) starter() (string, error) {
	if !a.global {
		return config.Starter, nil
	}
	_, data, err := globalDirs(a.env)
	if err != nil {
		return "", err
	}
	if home, err := a.env.HomeDir(); err == nil {
		if rel, err := filepath.Rel(home, data); err == nil && !strings.HasPrefix(rel, "..") {
			data = "~/" + filepath.ToSlash(rel)
		}
	}
	text := strings.Replace(config.Starter, "workspace: .\n", "workspace: "+data+"\n", 1)
	if text == config.Starter {
		return "", fmt.Errorf("-g: the starter config has no workspace: line")
	}
	return text, nil
}
