package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/internal/platform"
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
	// TranscriptPath is the session's transcript, where the call is
	// written before the tool runs.
	TranscriptPath string `json:"transcript_path"`
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
	if ev.ID == "" {
		// A Claude Code whose hook input has no tool_use_id: the id is
		// the transcript's, or the import would count the call again.
		ev.ID = callID(in.TranscriptPath, in.ToolName, ev)
	}
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

// tailSize is how much of the end of a transcript callID reads: the call
// a hook reports was written moments before.
const tailSize = 1 << 20

// callID returns the id of the last call of tool in the transcript at
// path that is the event ev (the same skill, or the same SKILL.md read),
// "" when none is found or the transcript cannot be read. Only a regular
// file is read, never through a link at its end, and only its tail.
func callID(path, tool string, ev agent.Event) string {
	if !filepath.IsAbs(path) {
		return ""
	}
	f, err := platform.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return ""
	}
	start := max(0, info.Size()-tailSize)
	tail := make([]byte, info.Size()-start)
	if _, err := f.ReadAt(tail, start); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	lines := bytes.Split(tail, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		if id := lineCallID(lines[i], tool, ev); id != "" {
			return id
		}
	}
	return ""
}

// lineCallID returns the id of the last call of tool in one transcript
// line that is the event ev, "" when there is none.
func lineCallID(raw []byte, tool string, ev agent.Event) string {
	if !bytes.Contains(raw, toolUse) {
		return ""
	}
	var l line
	var blocks []block
	if json.Unmarshal(raw, &l) != nil || len(l.Message.Content) == 0 || l.Message.Content[0] != '[' ||
		json.Unmarshal(l.Message.Content, &blocks) != nil {
		return ""
	}
	for i := len(blocks) - 1; i >= 0; i-- {
		bl := blocks[i]
		if bl.Type != "tool_use" || bl.Name != tool {
			continue
		}
		if got, ok, _ := event(bl.Name, bl.Input, l.Cwd); ok && got.Skill == ev.Skill && got.Path == ev.Path {
			return bl.ID
		}
	}
	return ""
}
