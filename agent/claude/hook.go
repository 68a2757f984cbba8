package claude

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/internal/hostenv"
)

// MaxHookInput bounds what ReadHook reads from stdin. A Skill call's input
// and response are small; a Read of a SKILL.md carries the file, which
// skillsync caps far below this.
const MaxHookInput = 8 << 20

// hookInput is what a PostToolUse hook gets on stdin that matters here.
type hookInput struct {
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	ToolUseID     string          `json:"tool_use_id"`
	Cwd           string          `json:"cwd"`
}

// ErrNoSkill is agent.ErrNoSkill.
var ErrNoSkill = agent.ErrNoSkill

// ReadHook reads the JSON a Claude Code hook gets on stdin and returns
// the event it reports: a call of the skill tool is a use of the skill it
// names, a Read of a file named SKILL.md a view of that file (with At
// zero: now). Any other tool call is ErrNoSkill. Input over MaxHookInput,
// input that is not one JSON object, and a skill or read call that names
// nothing are errors that say so.
func ReadHook(env hostenv.Env, r io.Reader) (agent.Event, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxHookInput+1))
	if err != nil {
		return agent.Event{}, fmt.Errorf("read the hook input: %w", err)
	}
	if len(data) > MaxHookInput {
		return agent.Event{}, fmt.Errorf("the hook input is larger than %d bytes; it is not a Claude Code hook's", MaxHookInput)
	}
	var in hookInput
	if err := json.Unmarshal(data, &in); err != nil {
		return agent.Event{}, fmt.Errorf("the hook input is not Claude Code's hook JSON: %w", err)
	}
	if in.HookEventName != "" && in.HookEventName != "PostToolUse" {
		// A PreToolUse hook runs before the call, which may be refused or
		// fail: only a call that ran is a use.
		return agent.Event{}, ErrNoSkill
	}
	if in.ToolName == "" {
		return agent.Event{}, fmt.Errorf("the hook input names no tool (tool_name); is this a PostToolUse hook with matcher %q?", SkillTool)
	}
	ev, ok, bad := event(in.ToolName, in.ToolInput, in.Cwd)
	if bad {
		return agent.Event{}, fmt.Errorf("the hook input's %s call names no skill in tool_input", in.ToolName)
	}
	if !ok {
		return agent.Event{}, ErrNoSkill
	}
	ev.ID = in.ToolUseID
	ev.Where = "Claude Code hook"
	// The project: $CLAUDE_PROJECT_DIR, which Claude Code sets for the
	// hooks it runs, else the session's cwd the payload gives.
	if dir := env.Getenv("CLAUDE_PROJECT_DIR"); filepath.IsAbs(dir) {
		ev.Dir = filepath.Clean(dir)
	} else if filepath.IsAbs(in.Cwd) {
		ev.Dir = filepath.Clean(in.Cwd)
	}
	return ev, nil
}
