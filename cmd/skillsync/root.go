package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
)

// Exit codes, as DESIGN.md fixes them.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	exitPartial = 3
)

// exitError carries an exit code out of a command. A nil err means the
// command already said what went wrong.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

func usageError(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// app is what every command shares: the global flags and the streams.
type app struct {
	stdout, stderr io.Writer
	configPath     string
	json           bool
	strict         bool
	quiet          bool
}

// Main runs the command line and returns the exit code. Tests call it
// in-process.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a := &app{stdout: stdout, stderr: stderr}
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	var ce *skillsync.ConfigError
	code := exitFailure
	switch {
	case errors.As(err, &ee):
		code, err = ee.code, ee.err
	case errors.As(err, &ce):
		code = exitUsage
	case strings.HasPrefix(err.Error(), "unknown command"):
		code = exitUsage
		err = fmt.Errorf("%w\nRun 'skillsync --help' for usage", err)
	}
	if err != nil {
		fmt.Fprintf(stderr, "skillsync: %v\n", err)
	}
	return code
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "skillsync",
		Short: "Sync Agent Skills from git into the places agents read them",
		Long: `skillsync keeps a team's Agent Skills on every machine: it reads skills from
git repositories, the skills built into it and local directories, merges them
by priority (global < marketplace < workspace < user), writes them where
agents read them (skillsync sync), and lets agents find, read, render and
record the use of them.

Without a config file the built-in skills are the only marketplace source and
the current directory is the workspace: skillsync sync writes them into
./.skills-cache/builtin/.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&a.configPath, "config", "", "config file (default $SKILLSYNC_CONFIG, then ./skillsync.yaml)")
	root.PersistentFlags().BoolVar(&a.json, "json", false, "print JSON for machines instead of text")
	root.PersistentFlags().BoolVarP(&a.quiet, "quiet", "q", false, "print no warnings or progress")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &exitError{code: exitUsage, err: fmt.Errorf("%w\nRun '%s --help' for usage", err, c.CommandPath())}
	})
	root.AddCommand(
		a.validateCommand(),
		a.listCommand(),
		a.showCommand(),
		a.readCommand(),
		a.searchCommand(),
		a.promptCommand(),
		a.initCommand(),
		a.fetchCommand(),
		a.syncCommand(),
		a.updateCommand(),
		a.verifyCommand(),
		a.useCommand(),
		a.curateCommand(),
		a.restoreCommand(),
		a.pinCommand(true),
		a.pinCommand(false),
		a.auditCommand(),
		a.daemonCommand(),
		a.mcpCommand(),
		a.versionCommand(),
	)
	return root
}

// engine loads the config and returns an engine over it.
func (a *app) engine(opts ...skillsync.Option) (*skillsync.Engine, error) {
	cfg, err := skillsync.FindConfig(a.configPath)
	if err != nil {
		return nil, err
	}
	if a.strict {
		cfg.Strict = true
	}
	for _, w := range cfg.Warnings {
		a.warn("%s", w)
	}
	opts = append([]skillsync.Option{skillsync.WithWarnings(func(w string) { a.warn("%s", w) })}, opts...)
	return skillsync.NewEngine(cfg, opts...), nil
}

// warn writes a warning to stderr unless --quiet.
func (a *app) warn(format string, args ...any) {
	if !a.quiet {
		fmt.Fprintf(a.stderr, "warning: "+format+"\n", args...)
	}
}

// args wraps a cobra argument check so a violation exits 2.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, a []string) error {
		if err := check(c, a); err != nil {
			return &exitError{code: exitUsage, err: fmt.Errorf("%s: %w\nRun '%s --help' for usage", c.CommandPath(), err, c.CommandPath())}
		}
		return nil
	}
}
