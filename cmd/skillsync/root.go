package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/internal/termtext"
)

// factory is what one run of the command line takes from its host, as
// gh's cmdutil.Factory: the streams, and the working directory and
// environment (env) every command and the library below it read instead
// of the process's. main passes the process's own; tests pass their own
// directory and variables, so they run side by side.
type factory struct {
	// process is set when the run is the whole process (Main), which
	// may then set the process's collector for the command (tuneMemory).
	process        bool
	env            hostenv.Env
	stdin          io.Reader
	stdout, stderr io.Writer
}

// app is what every command shares: the factory, the global flags and
// the process's collector.
type app struct {
	factory
	configPath string
	json       bool
	quiet      bool
	logFormat  string
	global     bool
	// mem is the process's collector, nil in a test's in-process run.
	mem *memory
	// signals ends the command's context at a SIGINT or SIGTERM.
	signals *stopSignals
}

// Main runs the command line in the process's directory and environment
// and returns the exit status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return execute(factory{process: true, stdin: stdin, stdout: stdout, stderr: stderr}, args)
}

// execute runs the command line with what f gives and returns the exit
// status. Tests call it in-process with buffers and their own directory
// and environment.
func execute(f factory, args []string) int {
	stdin, stdout, stderr := f.stdin, f.stdout, f.stderr
	signals := listenForStop()
	ctx, stop := signals.ctx, signals.stop
	if !f.process {
		// A process ends when this returns, and the catching with it:
		// giving the signals back would wait on os/signal's thread.
		defer stop()
	}
	// The first signal lets the command wind down (a sync finishes its
	// swaps, mcp records the uses it answered); a second, a second or
	// more later, ends the process there and then, as asked twice. Every
	// write survives that (atomic renames, crash recovery at the next
	// run). Not one sooner: a single stop may come as two signals at once
	// (GNU timeout signals the process, then its group).
	context.AfterFunc(ctx, func() { time.AfterFunc(secondSignalAfter, stop) })
	a := &app{factory: f, signals: signals}
	root := a.newRootCommand()
	if f.process {
		a.mem = tuneMemory(root, args)
	}
	// Never nil: for nil, cobra would read the process's own arguments,
	// which are not this run's when a test runs it in-process.
	root.SetArgs(append([]string{}, args...))
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	strictBuiltins(root)
	err := root.ExecuteContext(ctx)
	if err != nil && strings.HasPrefix(err.Error(), "unknown command") {
		err = usageError("%w\nRun 'skillsync --help' for usage", err)
		// cobra stops before it parses the flags: the log format is
		// taken from the command line as it is.
		a.logFormat = logFormatIn(args)
	}
	if err != nil {
		if msg := interrupted(ctx, message(err)); msg != "" {
			// An error may quote a source, a record file or an argument:
			// escaped, it cannot act on a terminal.
			a.logError(msg)
		}
	}
	return exitCode(err)
}

// interrupted is msg, the message of a command's error, said once as
// the interruption it is when a signal stopped the command (ctx ended):
// the skills and files it did not reach failed for that alone.
func interrupted(ctx context.Context, msg string) string {
	if ctx.Err() == nil {
		return msg
	}
	if msg == context.Canceled.Error() {
		msg = ""
	}
	if msg != "" {
		msg = " (" + msg + ")"
	}
	return "interrupted" + msg + "; what was done is kept whole, and running the command again finishes it"
}

func (a *app) newRootCommand() *cobra.Command {
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
	root.PersistentFlags().StringVar(&a.logFormat, "log-format", "", "warnings and errors (and the daemon's log) as text or json (default text; the daemon: json when stderr is not a terminal)")
	root.PersistentFlags().BoolVarP(&a.global, "global", "g", false, "use the user-wide config, cache and lock, and the agents' user folders (see docs/configuration.md)")
	root.PersistentPreRunE = func(c *cobra.Command, args []string) error {
		// The command may act from here on: a signal now winds it down.
		a.signals.wait()
		if err := a.checkLogFormat(); err != nil {
			return err
		}
		return a.useGlobal(c, args)
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError("%w\nRun '%s --help' for usage", err, c.CommandPath())
	})
	root.AddCommand(
		newValidateCommand(a, nil),
		newListCommand(a, nil),
		newShowCommand(a, nil),
		newReadCommand(a, nil),
		newSearchCommand(a, nil),
		newPromptCommand(a, nil),
		newInitCommand(a, nil),
		newAddCommand(a, nil), newRemoveCommand(a, nil), newLsRemoteCommand(a, nil), newNewCommand(a, nil), newAgentsCommand(a, nil),
		newFetchCommand(a, nil),
		newSyncCommand(a, nil),
		newUpdateCommand(a, nil),
		newOutdatedCommand(a, nil),
		newStatusCommand(a, nil),
		newPublishCommand(a, nil),
		newVerifyCommand(a, nil),
		newUseCommand(a, nil),
		newUsageCommand(a, nil),
		newCurateCommand(a, nil),
		newRestoreCommand(a, nil),
		newProposeCommand(a, nil),
		newDraftsCommand(a, nil),
		newPromoteCommand(a, nil),
		newRejectCommand(a, nil),
		newPinCommand(a, true, nil),
		newPinCommand(a, false, nil),
		newAuditCommand(a, nil),
		newFleetCommand(a),
		newRolloutCommand(a, nil),
		a.daemonCommand(),
		newMCPCommand(a, nil),
		newServeCommand(a, nil),
		newVersionCommand(a),
	)
	return root
}

// strictBuiltins makes cobra's own help and completion commands refuse
// what they do not know, as every other command does (exit 2): cobra
// prints the usage and exits 0 for "help bogus" or "completion tcsh",
// which a script takes for success. It is called once the command's
// output is set: the completion scripts are written where it was then.
func strictBuiltins(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Run = nil
			c.RunE = func(c *cobra.Command, topic []string) error {
				found, rest, err := c.Root().Find(topic)
				if err != nil || found == nil || len(rest) > 0 {
					return usageError("unknown help topic %q\nRun 'skillsync --help' for usage", strings.Join(topic, " "))
				}
				return found.Help()
			}
		case "completion":
			c.Args = args(cobra.NoArgs)
			c.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
		}
	}
}

// loadConfig finds and loads the config, passing its warnings on.
func (a *app) loadConfig() (*config.Config, error) {
	return a.findConfig(false)
}

// findConfig is loadConfig; writes refuses the built-in default in a
// subfolder of a workspace (config.Config.Above), where a command that
// writes the workspace would start a second one unasked: its cache, lock,
// skills/ and targets beside the project's.
func (a *app) findConfig(writes bool) (*config.Config, error) {
	cfg, err := config.FindIn(a.env, a.configPath, skillsync.Kinds())
	if err != nil {
		return nil, err
	}
	if writes && cfg.Above != "" {
		return nil, nestedWorkspace(cfg.Above)
	}
	for _, w := range cfg.Warnings {
		a.warn("%s", w)
	}
	return cfg, nil
}

// engine loads the config and returns an engine over it.
func (a *app) engine(opts ...skillsync.Option) (*skillsync.Engine, error) {
	cfg, err := a.loadConfig()
	if err != nil {
		return nil, err
	}
	return a.engineOver(cfg, opts...), nil
}

// writeEngine is engine for the commands that write the workspace: sync,
// update, add, remove, the daemon, curate, ... (findConfig says why).
func (a *app) writeEngine(opts ...skillsync.Option) (*skillsync.Engine, error) {
	cfg, err := a.findConfig(true)
	if err != nil {
		return nil, err
	}
	return a.engineOver(cfg, opts...), nil
}

// nestedWorkspace is the refusal of a command that would write a second
// workspace below the one whose config is above.
func nestedWorkspace(above string) error {
	return usageError("no %s here, but %s is in a folder above: run skillsync in %s, pass --config %s, or run skillsync init here to start a workspace of its own",
		config.FileName, above, termtext.ShellArg(filepath.Dir(above)), termtext.ShellArg(above))
}

// engineOver returns an engine over cfg that passes its warnings on and
// runs in the factory's directory and environment.
func (a *app) engineOver(cfg *config.Config, opts ...skillsync.Option) *skillsync.Engine {
	l := cfg.Layout()
	a.mem.fitWorkspace(l.LockFile(), l.UsageFile())
	opts = append([]skillsync.Option{skillsync.WithWarnings(func(w string) { a.warn("%s", w) })}, opts...)
	if a.env.Vars != nil {
		opts = append(opts, skillsync.WithHost(a.env.Dir, a.env.Environ()))
	}
	return skillsync.NewEngine(cfg, opts...)
}

// abs makes a path the command line was given absolute from the working
// directory; "" stays "".
func (a *app) abs(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	abs, err := a.env.Abs(p)
	if err != nil {
		return "", fmt.Errorf("find the current directory: %w", err)
	}
	return abs, nil
}

// warn writes a warning to stderr unless --quiet.
func (a *app) warn(format string, args ...any) {
	if !a.quiet {
		a.logWarn(fmt.Sprintf(format, args...))
	}
}

// args wraps a cobra argument check so a violation is a usage error.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, a []string) error {
		if err := check(c, a); err != nil {
			return usageError("%s: %w\nRun '%s --help' for usage", c.CommandPath(), err, c.CommandPath())
		}
		return nil
	}
}

// pick returns runF when a test gives one, to see the options a command
// line parses into, else the command's own run.
func pick[O any](runF, own func(context.Context, *O) error) func(context.Context, *O) error {
	if runF != nil {
		return runF
	}
	return own
}
