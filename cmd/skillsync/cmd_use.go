package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/config"
)

type useOptions struct {
	name string
	view bool
	hook string
}

// hookTimeout bounds a hook's run: the agent waits for it after every
// skill call.
const hookTimeout = 10 * time.Second

func newUseCommand(a *app, runF func(context.Context, *useOptions) error) *cobra.Command {
	opts := &useOptions{}
	cmd := &cobra.Command{
		Use:   "use NAME | use --hook claude",
		Short: "Record that a skill was used (or, with --view, looked at)",
		Long: `Record a use of a catalog skill at the current time, or with --view a view:
an agent opened the skill to decide whether it fits. Curation counts idle
time from the last use or view. An unknown name exits 1 and suggests the
nearest names; a hidden skill is refused.

--hook claude reads a Claude Code hook's JSON on stdin instead of a name
(skillsync init --agent claude --hooks installs the hook): a call of the
Skill tool records a use of the skill it names, a Read of a skill's
SKILL.md a view. A hook must never get in the agent's way, so it never
exits 2 (which Claude Code takes for a blocking error and shows the model):
a tool call that is no skill's, or a skill that is not this workspace's (a
plugin's, a personal one), exits 0 and records nothing; input that is not
a hook's, a config that does not load or a usage file that cannot be
written exits 1, which Claude Code shows the user and goes on. With
no --config, the config is taken from the project the hook input names
(Claude Code's $CLAUDE_PROJECT_DIR, else the session's cwd) or the nearest
folder above it that has one. A PreToolUse input records nothing (only a
call that ran is a use), and a call whose tool_use_id was recorded before
is not counted again. The hook gives up after 10 seconds.`,
		Example: `  skillsync use release-notes
  skillsync use --view pdf
  echo '{"tool_name":"Skill","tool_input":{"skill":"pdf"}}' | skillsync use --hook claude`,
		Args: func(c *cobra.Command, names []string) error {
			if opts.hook != "" {
				return args(cobra.NoArgs)(c, names)
			}
			return args(cobra.ExactArgs(1))(c, names)
		},
		RunE: func(c *cobra.Command, names []string) error {
			if len(names) == 1 {
				opts.name = names[0]
			}
			return pick(runF, a.runUse)(c.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.view, "view", false, "record a view instead of a use")
	cmd.Flags().StringVar(&opts.hook, "hook", "", "read the hook input of this agent on stdin: "+strings.Join(hookAgents(), ", "))
	return cmd
}

func (a *app) runUse(ctx context.Context, opts *useOptions) error {
	if opts.hook != "" {
		return a.runUseHook(ctx, opts)
	}
	eng, err := a.engine()
	if err != nil {
		return err
	}
	recorded, err := eng.Use(ctx, opts.name, opts.view)
	if err != nil {
		return err
	}
	return a.printUse(recorded, opts.view)
}

func (a *app) printUse(recorded string, view bool) error {
	kind := map[bool]string{true: "view", false: "use"}[view]
	if a.json {
		return writeJSON(a.stdout, map[string]string{"name": recorded, "recorded": kind})
	}
	if !a.quiet {
		fmt.Fprintf(a.stderr, "recorded a %s of %s\n", kind, safe(recorded))
	}
	return nil
}

// runUseHook records what an agent's hook reports. Every failure is a
// hookError (exit 1, never 2); see the command's help for why.
func (a *app) runUseHook(ctx context.Context, opts *useOptions) error {
	reg, ok := skillsync.Agents().Lookup(opts.hook)
	if !ok || reg.ReadHook == nil {
		return hookFailure(fmt.Errorf("--hook %q: the agents known are %s", opts.hook, strings.Join(hookAgents(), ", ")))
	}
	if opts.view {
		return hookFailure(errors.New("--view does not go with --hook: the hook input says whether it was a use or a view"))
	}
	ctx, cancel := context.WithTimeout(ctx, hookTimeout)
	defer cancel()
	ev, err := readHook(ctx, a.stdin, func(r io.Reader) (agent.Event, error) { return reg.ReadHook(a.env, r) })
	if errors.Is(err, agent.ErrNoSkill) {
		return nil
	}
	if err != nil {
		return hookFailure(err)
	}
	if a.configPath == "" && a.env.Getenv("SKILLSYNC_CONFIG") == "" && ev.Dir != "" {
		if name, ok := findConfig(ev.Dir); ok {
			a.configPath = name
		}
	}
	eng, err := a.engine()
	if err != nil {
		return hookFailure(err)
	}
	recorded, dup, err := eng.RecordHook(ctx, reg.Key, ev)
	var unknown *skillsync.UnknownSkillError
	if errors.As(err, &unknown) {
		if !a.quiet {
			a.logError(fmt.Sprintf("%s is not a skill of this workspace; nothing recorded", safe(unknown.Name)))
		}
		return nil
	}
	if err != nil {
		return hookFailure(err)
	}
	if dup {
		if a.json {
			return writeJSON(a.stdout, map[string]string{"name": recorded, "recorded": "none: the call was recorded before"})
		}
		return nil
	}
	if a.json {
		return a.printUse(recorded, ev.View)
	}
	return nil
}

// hookAgents are the agents whose hook input --hook reads.
func hookAgents() []string {
	return skillsync.Agents().Keys(func(r agent.Registration) bool { return r.ReadHook != nil })
}

// maxConfigDepth bounds how many folders findConfig climbs.
const maxConfigDepth = 64

// findConfig looks for the config in dir, the project the agent says it
// works in, and then in the folders above it (a session's cwd may be a
// folder inside the workspace).
func findConfig(dir string) (string, bool) {
	for i := 0; i < maxConfigDepth; i++ {
		if name := filepath.Join(dir, config.FileName); fileExists(name) {
			return name, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", false
}

func fileExists(name string) bool {
	_, err := os.Lstat(name)
	return err == nil
}

// readHook reads the hook's input, giving up when ctx ends: an agent that
// keeps stdin open must not hold the hook, or the process, past its time
// or a signal.
func readHook(ctx context.Context, r io.Reader, parse func(io.Reader) (agent.Event, error)) (agent.Event, error) {
	type read struct {
		ev  agent.Event
		err error
	}
	done := make(chan read, 1)
	go func() {
		ev, err := parse(r)
		done <- read{ev, err}
	}()
	select {
	case got := <-done:
		return got.ev, got.err
	case <-ctx.Done():
		return agent.Event{}, fmt.Errorf("the hook input did not end within %s: %w", hookTimeout, ctx.Err())
	}
}
