package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/agent/claude"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// claudeWorkspace is a synced workspace with Claude Code's target, and the
// folder of the test's home where Claude Code keeps its transcripts.
func claudeWorkspace(t *testing.T) (ws, projects string) {
	t.Helper()
	ws = t.TempDir()
	if r := run(t, ws, "init", "--agent", "claude"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	// The built-in skills, enabled by their one commented line.
	cfgFile := filepath.Join(ws, "skillsync.yaml")
	skilltest.WriteFile(t, cfgFile, strings.Replace(skilltest.ReadFile(t, cfgFile), "  # - embedded: builtin\n", "  - embedded: builtin\n", 1))
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	return ws, filepath.Join(home(t), ".claude", "projects", claude.FolderName(ws))
}

// noClaudeEnv keeps the environment of whoever runs the tests (perhaps
// Claude Code itself) out of them.
var noClaudeEnv = []string{"CLAUDE_CONFIG_DIR=", "CLAUDE_PROJECT_DIR="}

func toolLine(ts, cwd, tool, input string) string {
	return fmt.Sprintf(`{"type":"assistant","timestamp":%q,"cwd":%q,"sessionId":"s1","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_%s","name":%q,"input":%s}]}}`,
		ts, cwd, strings.ReplaceAll(ts, ":", ""), tool, input)
}

type usageRecord struct {
	UseCount     int    `json:"use_count"`
	ViewCount    int    `json:"view_count"`
	LastUsedAt   string `json:"last_used_at"`
	LastViewedAt string `json:"last_viewed_at"`
	LastSource   string `json:"last_source"`
}

func usageOf(t *testing.T, ws string) map[string]usageRecord {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ws, "skills", ".usage.json"))
	if err != nil {
		t.Fatal(err)
	}
	var u struct{ Skills map[string]usageRecord }
	if err := json.Unmarshal(data, &u); err != nil {
		t.Fatal(err)
	}
	return u.Skills
}

type importJSON struct {
	Agent        string   `json:"agent"`
	Files        int      `json:"files"`
	Uses         int      `json:"uses"`
	Views        int      `json:"views"`
	Unknown      int      `json:"unknown"`
	UnknownNames []string `json:"unknown_names"`
	Malformed    int      `json:"malformed"`
	TooLong      int      `json:"too_long"`
	Before       int      `json:"before_since"`
	Reactivated  []string `json:"reactivated"`
}

// TestUsageImportClaude: uses and views in Claude Code's transcripts are
// recorded at their times through import, once, however often the import
// runs; lines added later are imported by the next run; curate then says
// where the last use came from.
func TestUsageImportClaude(t *testing.T) {
	t.Parallel()
	ws, projects := claudeWorkspace(t)
	session := filepath.Join(projects, "0b6c-session.jsonl")
	target := filepath.Join(ws, ".claude", "skills")
	skilltest.AppendLines(t, session,
		`{"type":"user","timestamp":"2026-03-01T09:59:00Z","cwd":"`+ws+`","message":{"role":"user","content":"write a skill"}}`,
		toolLine("2026-03-01T10:00:00.500Z", ws, "Skill", `{"skill":"writing-skills"}`),
		toolLine("2026-03-01T10:01:00Z", ws, "Read", `{"file_path":"`+filepath.Join(target, "skillsync", "SKILL.md")+`"}`),
		toolLine("2026-03-01T10:02:00Z", ws, "Read", `{"file_path":"`+filepath.Join(ws, ".skills-cache", "builtin", "writing-skills", "SKILL.md")+`"}`),
		toolLine("2026-03-01T10:03:00Z", ws, "Skill", `{"skill":"superpowers:brainstorming"}`),
		toolLine("2026-03-01T10:04:00Z", ws, "Read", `{"file_path":"/home/someone/.claude/skills/mine/SKILL.md"}`),
		`{"type":"assistant","timestamp":"2026-03-01T10:05:00Z","message":{"content":[{"type":"tool_use","name":"Skill","input":[]}]}}`,
		`not json at all, "tool_use"`,
	)
	r := runEnv(t, ws, noClaudeEnv, "usage", "import", "claude", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	got := decode[importJSON](t, r)
	want := importJSON{Agent: "claude", Files: 1, Uses: 1, Views: 2, Unknown: 2,
		UnknownNames: []string{"/home/someone/.claude/skills/mine/SKILL.md", "superpowers:brainstorming"}, Malformed: 2, Reactivated: []string{}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("first import:\n got %+v\nwant %+v", got, want)
	}
	u := usageOf(t, ws)
	ws1, ss := u["marketplace:builtin/writing-skills"], u["marketplace:builtin/skillsync"]
	if ws1.UseCount != 1 || ws1.ViewCount != 1 || ws1.LastUsedAt != "2026-03-01T10:00:00Z" || ws1.LastViewedAt != "2026-03-01T10:02:00Z" || ws1.LastSource != "import" {
		t.Errorf("writing-skills = %+v", ws1)
	}
	if ss.ViewCount != 1 || ss.UseCount != 0 || ss.LastViewedAt != "2026-03-01T10:01:00Z" || ss.LastSource != "import" {
		t.Errorf("skillsync = %+v", ss)
	}

	// Again: nothing new, nothing counted.
	again := decode[importJSON](t, runEnv(t, ws, noClaudeEnv, "usage", "import", "claude", "--json"))
	if again.Uses+again.Views+again.Files+again.Malformed != 0 {
		t.Errorf("a second import counted %+v", again)
	}
	if u2 := usageOf(t, ws); !reflect.DeepEqual(u2, u) {
		t.Errorf("a second import changed usage:\n%+v\n%+v", u2, u)
	}

	// The session goes on; a new one starts in a folder of the workspace.
	skilltest.AppendLines(t, session, toolLine("2026-03-02T08:00:00Z", ws, "Skill", `{"skill":"skillsync"}`))
	docs := filepath.Join(ws, "docs")
	skilltest.AppendLines(t, filepath.Join(filepath.Dir(projects), claude.FolderName(docs), "s2.jsonl"),
		toolLine("2026-03-02T09:00:00Z", docs, "Read", `{"file_path":"../.claude/skills/skillsync/SKILL.md"}`))
	r = runEnv(t, ws, noClaudeEnv, "usage", "import", "claude")
	if r.code != 0 || !strings.Contains(r.stdout, "imported from claude: 1 use and 1 view from 2 transcripts") {
		t.Errorf("third import: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if ss := usageOf(t, ws)["marketplace:builtin/skillsync"]; ss.UseCount != 1 || ss.ViewCount != 2 || ss.LastViewedAt != "2026-03-02T09:00:00Z" {
		t.Errorf("skillsync after the third import = %+v", ss)
	}

	// Curation says where each skill's last use came from.
	r = run(t, ws, "curate", "--dry-run", "--now", "2027-01-15T00:00:00Z")
	if r.code != 0 || strings.Count(r.stdout, "last used through import") != 2 {
		t.Errorf("curate does not say the uses came through import:\n%s%s", r.stdout, r.stderr)
	}
	plan := decode[struct {
		Skills []struct {
			Name       string `json:"name"`
			LastSource string `json:"last_source"`
		} `json:"skills"`
	}](t, run(t, ws, "curate", "--dry-run", "--json", "--now", "2027-01-15T00:00:00Z"))
	if len(plan.Skills) != 2 || plan.Skills[0].LastSource != "import" || plan.Skills[1].LastSource != "import" {
		t.Errorf("curate --json skills = %+v", plan.Skills)
	}
}

// TestUsageImportSinceAndErrors: --since passes over older events for
// good; bad flags and agents are usage errors; a corrupt state file is a
// clear error that changes nothing.
func TestUsageImportSinceAndErrors(t *testing.T) {
	t.Parallel()
	ws, projects := claudeWorkspace(t)
	skilltest.AppendLines(t, filepath.Join(projects, "s.jsonl"),
		toolLine("2026-01-10T10:00:00Z", ws, "Skill", `{"skill":"skillsync"}`),
		toolLine("2026-02-10T10:00:00Z", ws, "Skill", `{"skill":"writing-skills"}`))
	for _, args := range [][]string{
		{"usage", "import", "claude", "--since", "last week"},
		// In the future, it would pass over every event for good.
		{"usage", "import", "claude", "--since", time.Now().AddDate(1, 0, 0).Format(time.DateOnly)},
		{"usage", "import", "cursor"},
		{"usage", "import", "claude", "claude"},
	} {
		if r := runEnv(t, ws, noClaudeEnv, args...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, r.code, r.stderr)
		}
	}
	state := filepath.Join(ws, "skills", ".imported.json")
	if err := os.WriteFile(state, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runEnv(t, ws, noClaudeEnv, "usage", "import", "claude"); r.code != 1 || !strings.Contains(r.stderr, state) {
		t.Errorf("corrupt state: %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "skills", ".usage.json")); err == nil {
		if u := usageOf(t, ws); u["marketplace:builtin/skillsync"].UseCount != 0 {
			t.Errorf("an import with a corrupt state recorded %+v", u)
		}
	}
	os.Remove(state)
	got := decode[importJSON](t, runEnv(t, ws, noClaudeEnv, "usage", "import", "claude", "--since", "2026-02-01", "--json"))
	if got.Uses != 1 || got.Before != 1 {
		t.Errorf("--since: %+v", got)
	}
	if u := usageOf(t, ws); u["marketplace:builtin/skillsync"].UseCount != 0 || u["marketplace:builtin/writing-skills"].UseCount != 1 {
		t.Errorf("--since recorded %+v", u)
	}
}

// TestUsageImportNoTranscripts: a workspace Claude Code never ran in
// imports nothing and says so.
func TestUsageImportNoTranscripts(t *testing.T) {
	t.Parallel()
	ws, _ := claudeWorkspace(t)
	r := runEnv(t, ws, noClaudeEnv, "usage", "import", "claude")
	if r.code != 0 || !strings.Contains(r.stdout, "0 uses and 0 views from 0 transcripts") {
		t.Errorf("%d %q %s", r.code, r.stdout, r.stderr)
	}
}

// hookInput is a PostToolUse hook's input for one call; calls with
// different inputs have different tool_use ids.
func hookInput(tool, input string) string {
	return hookEvent("PostToolUse", "/x", tool, input)
}

func hookEvent(event, cwd, tool, input string) string {
	sum := sha256.Sum256([]byte(tool + input))
	return fmt.Sprintf(`{"session_id":"s1","transcript_path":"/x/s1.jsonl","cwd":%q,"permission_mode":"default","hook_event_name":%q,"tool_name":%q,"tool_input":%s,"tool_response":{"success":true},"tool_use_id":"toolu_%x"}`, cwd, event, tool, input, sum[:8])
}

// TestUseHookClaude: the hook records a use of the skill Claude Code's
// Skill tool names and a view of a SKILL.md its Read tool read, through
// hook; a skill that is not the workspace's, or another tool, records
// nothing and exits 0.
func TestUseHookClaude(t *testing.T) {
	t.Parallel()
	ws, _ := claudeWorkspace(t)
	r := runIn(t, ws, noClaudeEnv, hookInput("Skill", `{"skill":"writing-skills","args":"x"}`), "use", "--hook", "claude")
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("skill call: %d %q %s", r.code, r.stdout, r.stderr)
	}
	read := hookInput("Read", `{"file_path":"`+filepath.Join(ws, ".claude", "skills", "skillsync", "SKILL.md")+`"}`)
	if r := runIn(t, ws, noClaudeEnv, read, "use", "--hook", "claude"); r.code != 0 {
		t.Fatalf("read: %d %s", r.code, r.stderr)
	}
	u := usageOf(t, ws)
	if w := u["marketplace:builtin/writing-skills"]; w.UseCount != 1 || w.LastSource != "hook" {
		t.Errorf("writing-skills = %+v", w)
	}
	if s := u["marketplace:builtin/skillsync"]; s.ViewCount != 1 || s.UseCount != 0 || s.LastSource != "hook" {
		t.Errorf("skillsync = %+v", s)
	}
	r = runIn(t, ws, noClaudeEnv, hookInput("Skill", `{"skill":"superpowers:brainstorming"}`), "use", "--hook", "claude")
	if r.code != 0 || !strings.Contains(r.stderr, "not a skill of this workspace") {
		t.Errorf("unknown skill: %d %s", r.code, r.stderr)
	}
	r = runIn(t, ws, noClaudeEnv, hookInput("Bash", `{"command":"ls"}`), "use", "--hook", "claude")
	if r.code != 0 || r.stderr != "" {
		t.Errorf("another tool: %d %s", r.code, r.stderr)
	}
	// The same call sent again (two hooks registered, a retry), and a
	// PreToolUse input: nothing more is counted.
	for _, in := range []string{
		hookInput("Skill", `{"skill":"writing-skills","args":"x"}`),
		hookEvent("PreToolUse", "/x", "Skill", `{"skill":"writing-skills","args":"y"}`),
	} {
		if r := runIn(t, ws, noClaudeEnv, in, "use", "--hook", "claude"); r.code != 0 {
			t.Errorf("%s: %d %s", in, r.code, r.stderr)
		}
	}
	if u2 := usageOf(t, ws); !reflect.DeepEqual(u2, u) {
		t.Errorf("nothing was to be recorded, usage is now %+v", u2)
	}
}

// TestUseHookNeverBlocks: whatever goes wrong, the hook exits 1 (shown to
// the user), never 2, which Claude Code feeds to the model as a blocking
// error: not even for a config that does not load, which is exit 2
// everywhere else.
func TestUseHookNeverBlocks(t *testing.T) {
	t.Parallel()
	ws, _ := claudeWorkspace(t)
	for name, stdin := range map[string]string{
		"empty":     "",
		"not json":  "PostToolUse Skill pdf",
		"no skill":  hookInput("Skill", `{}`),
		"too large": `{"tool_name":"Skill","x":"` + strings.Repeat("a", claude.MaxHookInput) + `"}`,
	} {
		var r result
		if name == "too large" {
			// Its own process, as an agent runs the hook, built without
			// -race: reading 8 MiB into a growing buffer under the
			// detector cost a second of CPU, a GC cycle spinning on the
			// long copies, and the reading is the same code.
			r = runProcessIn(t, ws, noClaudeEnv, stdin, "use", "--hook", "claude")
		} else {
			r = runIn(t, ws, noClaudeEnv, stdin, "use", "--hook", "claude")
		}
		if r.code != 1 || !strings.Contains(r.stderr, "hook input") {
			t.Errorf("%s: exit %d, want 1: %s", name, r.code, r.stderr)
		}
		if name == "too large" && !strings.Contains(r.stderr, "larger than") {
			t.Errorf("too large: not refused for its size: %s", r.stderr)
		}
	}
	if r := runIn(t, ws, noClaudeEnv, hookInput("Skill", `{"skill":"skillsync"}`), "use", "--hook", "codex"); r.code != 1 {
		t.Errorf("unknown agent: exit %d: %s", r.code, r.stderr)
	}
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "skillsync.yaml"), []byte("repositories: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runIn(t, broken, noClaudeEnv, hookInput("Skill", `{"skill":"skillsync"}`), "use", "--hook", "claude")
	if r.code != 1 || !strings.Contains(r.stderr, "skillsync.yaml") {
		t.Errorf("broken config: exit %d, want 1: %s", r.code, r.stderr)
	}
}

// TestUseHookFindsProjectConfig: Claude Code may run the hook in a folder
// of the project; $CLAUDE_PROJECT_DIR says which workspace it is.
func TestUseHookFindsProjectConfig(t *testing.T) {
	t.Parallel()
	ws, _ := claudeWorkspace(t)
	sub := filepath.Join(ws, "src", "deep")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	r := runIn(t, sub, []string{"CLAUDE_CONFIG_DIR=", "CLAUDE_PROJECT_DIR=" + ws}, hookInput("Skill", `{"skill":"skillsync"}`), "use", "--hook", "claude")
	if r.code != 0 {
		t.Fatalf("%d %s", r.code, r.stderr)
	}
	if s := usageOf(t, ws)["marketplace:builtin/skillsync"]; s.UseCount != 1 {
		t.Errorf("the use did not reach the project: %+v", s)
	}
	if _, err := os.Stat(filepath.Join(sub, "skills")); err == nil {
		t.Error("the hook wrote usage into the folder it ran in")
	}
	// Without $CLAUDE_PROJECT_DIR, the session's cwd in the input says
	// where the project is, run from anywhere.
	elsewhere := t.TempDir()
	r = runIn(t, elsewhere, []string{"CLAUDE_CONFIG_DIR=", "CLAUDE_PROJECT_DIR="}, hookEvent("PostToolUse", sub, "Skill", `{"skill":"skillsync","args":"again"}`), "use", "--hook", "claude")
	if r.code != 0 {
		t.Fatalf("%d %s", r.code, r.stderr)
	}
	if s := usageOf(t, ws)["marketplace:builtin/skillsync"]; s.UseCount != 2 {
		t.Errorf("the payload's cwd did not lead to the project: %+v", s)
	}
}

// TestHookThenImportCountsOnce: a Skill call the hook recorded is not
// counted again when the transcript that holds it is imported.
func TestHookThenImportCountsOnce(t *testing.T) {
	t.Parallel()
	ws, projects := claudeWorkspace(t)
	in := `{"hook_event_name":"PostToolUse","tool_name":"Skill","tool_input":{"skill":"skillsync"},"tool_use_id":"toolu_abc","cwd":"` + ws + `"}`
	if r := runIn(t, ws, noClaudeEnv, in, "use", "--hook", "claude"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	skilltest.AppendLines(t, filepath.Join(projects, "s.jsonl"),
		`{"type":"assistant","timestamp":"2026-03-01T10:00:00Z","cwd":"`+ws+`","message":{"content":[{"type":"tool_use","id":"toolu_abc","name":"Skill","input":{"skill":"skillsync"}}]}}`,
		`{"type":"assistant","timestamp":"2026-03-01T10:05:00Z","cwd":"`+ws+`","message":{"content":[{"type":"tool_use","id":"toolu_def","name":"Skill","input":{"skill":"skillsync"}}]}}`)
	r := runEnv(t, ws, noClaudeEnv, "usage", "import", "claude")
	if r.code != 0 || !strings.Contains(r.stdout, "1 use and 0 views") || !strings.Contains(r.stderr, "1 call recorded already by the hook") {
		t.Errorf("import: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if s := usageOf(t, ws)["marketplace:builtin/skillsync"]; s.UseCount != 2 || s.LastSource != "hook" {
		t.Errorf("skillsync = %+v, want 2 uses, the last through the hook", s)
	}
}
