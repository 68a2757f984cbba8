package claude

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/internal/skilltest"
)

func skillLine(ts, cwd, id, input string) string {
	return fmt.Sprintf(`{"type":"assistant","timestamp":%q,"cwd":%q,"sessionId":"s","message":{"role":"assistant","content":[{"type":"tool_use","id":%q,"name":"Skill","input":%s}]}}`, ts, cwd, id, input)
}

func readLine(ts, cwd, id, path string) string {
	return fmt.Sprintf(`{"type":"assistant","timestamp":%q,"cwd":%q,"message":{"content":[{"type":"text","text":"reading"},{"type":"tool_use","id":%q,"name":"Read","input":{"file_path":%q}}]}}`, ts, cwd, id, path)
}

// transcript appends lines to the transcript name of the project folder
// folder and returns its path.
func transcript(t *testing.T, projects, folder, name string, lines ...string) string {
	t.Helper()
	path := filepath.Join(projects, folder, name)
	skilltest.AppendLines(t, path, lines...)
	return path
}

func summary(evs []agent.Event) string {
	var out []string
	for _, e := range evs {
		if e.View {
			out = append(out, "view:"+e.Path)
		} else {
			out = append(out, "use:"+e.Skill)
		}
	}
	return strings.Join(out, " ")
}

func TestFolderName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/home/al/my_proj.v2":   "-home-al-my-proj-v2",
		"/Users/a b/Code/x-y":   "-Users-a-b-Code-x-y",
		"/tmp/TestX/001":        "-tmp-TestX-001",
		"/srv/🙂":                "-srv---",
		"/home/zoë/skills repo": "-home-zo--skills-repo",
	} {
		if got := FolderName(in); got != want {
			t.Errorf("FolderName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestImportFindsUsesAndViews: skill tool calls (either input spelling)
// are uses and reads of a SKILL.md views, with the transcript's times;
// sessions started in a subfolder count, other projects' do not.
func TestImportFindsUsesAndViews(t *testing.T) {
	t.Parallel()
	ws := filepath.Join(t.TempDir(), "my_ws")
	projects := t.TempDir()
	folder := FolderName(ws)
	skillMD := filepath.Join(ws, ".claude", "skills", "pdf", "SKILL.md")
	transcript(t, projects, folder, "a.jsonl",
		`{"type":"user","timestamp":"2026-03-01T10:00:00Z","cwd":"`+ws+`","message":{"role":"user","content":"use the pdf skill"}}`,
		skillLine("2026-03-01T10:00:01.250Z", ws, "t1", `{"skill":"pdf"}`),
		skillLine("2026-03-01T10:00:02Z", ws, "t2", `{"command":"/release-notes"}`),
		readLine("2026-03-01T10:00:03Z", ws, "t3", skillMD),
		readLine("2026-03-01T10:00:04Z", ws, "t4", filepath.Join(ws, "README.md")),
		`{"type":"user","timestamp":"2026-03-01T10:00:05Z","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"Launching skill: pdf"}]}}`,
	)
	// A subagent's transcript, a level down.
	transcript(t, projects, folder, "a/subagents/agent-1.jsonl", skillLine("2026-03-01T11:00:00Z", ws, "t5", `{"skill":"writing"}`))
	// A session started inside the workspace, with a relative read.
	sub := filepath.Join(ws, "docs")
	transcript(t, projects, FolderName(sub), "b.jsonl", readLine("2026-03-02T09:00:00Z", sub, "t6", "../.claude/skills/pdf/SKILL.md"))
	// Another project whose folder name begins like ours (my_ws-old).
	transcript(t, projects, folder+"-old", "c.jsonl", skillLine("2026-03-02T09:00:00Z", ws+"-old", "t7", `{"skill":"pdf"}`))
	// Another project that shares our folder name (my.ws vs my_ws).
	transcript(t, projects, folder, "d.jsonl", skillLine("2026-03-02T09:00:00Z", filepath.Join(filepath.Dir(ws), "my.ws"), "t8", `{"skill":"pdf"}`))

	im := New(ws, projects)
	b, err := im.Import(context.Background(), time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "use:pdf use:release-notes view:" + skillMD + " use:writing view:" + skillMD
	if got := summary(b.Events); got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
	if at := b.Events[0].At; !at.Equal(time.Date(2026, 3, 1, 10, 0, 1, 250e6, time.UTC)) || b.Events[0].ID != "t1" {
		t.Errorf("first event at %v id %s", at, b.Events[0].ID)
	}
	if b.Files != 5 || b.Malformed != 0 || len(b.Marks) != 5 {
		t.Errorf("files %d malformed %d marks %v", b.Files, b.Malformed, b.Marks)
	}
}

// TestImportIsIncremental: with the marks of the last import only lines
// added since are read; a rewritten transcript is read again whole.
func TestImportIsIncremental(t *testing.T) {
	t.Parallel()
	ws, projects := t.TempDir(), t.TempDir()
	folder := FolderName(ws)
	path := transcript(t, projects, folder, "s.jsonl", skillLine("2026-03-01T10:00:00Z", ws, "t1", `{"skill":"pdf"}`))
	im := New(ws, projects)
	b1, err := im.Import(context.Background(), time.Time{}, nil)
	if err != nil || len(b1.Events) != 1 {
		t.Fatal(b1, err)
	}
	b2, err := im.Import(context.Background(), time.Time{}, b1.Marks)
	if err != nil || len(b2.Events) != 0 || b2.Files != 0 {
		t.Fatalf("a second import found %v (files %d)", summary(b2.Events), b2.Files)
	}
	transcript(t, projects, folder, "s.jsonl", skillLine("2026-03-01T10:05:00Z", ws, "t2", `{"skill":"xlsx"}`))
	b3, err := im.Import(context.Background(), time.Time{}, b2.Marks)
	if err != nil || summary(b3.Events) != "use:xlsx" || b3.Rewritten != 0 {
		t.Fatalf("after an append: %v %+v", summary(b3.Events), b3)
	}
	if err := os.WriteFile(path, []byte(skillLine("2026-03-01T10:00:00Z", ws, "t9", `{"skill":"docx"}`)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b4, err := im.Import(context.Background(), time.Time{}, b3.Marks)
	if err != nil || summary(b4.Events) != "use:docx" || b4.Rewritten != 1 {
		t.Errorf("after a rewrite: %v %+v", summary(b4.Events), b4)
	}
}

// TestImportHostileLines: malformed lines are skipped and counted, long
// ones too, and the good lines around them still count.
func TestImportHostileLines(t *testing.T) {
	t.Parallel()
	ws, projects := t.TempDir(), t.TempDir()
	folder := FolderName(ws)
	transcript(t, projects, folder, "s.jsonl",
		`{"type":"assistant","message":{"content":[{"type":"tool_use"`, // cut short
		`{"type":"assistant","timestamp":"yesterday","message":{"content":[{"type":"tool_use","name":"Skill","input":{"skill":"pdf"}}]}}`,
		`{"type":"assistant","timestamp":"2026-03-01T10:00:00Z","message":{"content":[{"type":"tool_use","name":"Skill","input":"pdf"}]}}`,
		`{"type":"assistant","timestamp":"2026-03-01T10:00:00Z","message":{"content":[{"type":"tool_use","name":"Skill","input":{"skill":""}}]}}`,
		`{"type":"assistant","timestamp":"2026-03-01T10:00:00Z","message":{"content":[{"type":"tool_use","name":"Skill","input":{"skill":"`+strings.Repeat("a", 300)+`"}}]}}`,
		`{"type":"assistant","timestamp":"2026-03-01T10:00:00Z","message":{"content":{"type":"tool_use"}}}`,
		`{"type":"assistant","timestamp":"2026-03-01T10:00:00Z","message":{"content":[{"type":"tool_use","name":"Read","input":{"file_path":"SKILL.md"}}]}}`,
		`{"type":"user","message":{"content":"`+strings.Repeat("z", 2000)+` \"tool_use\""}}`,
		skillLine("2026-03-01T10:00:01Z", ws, "ok", `{"skill":"pdf"}`),
	)
	im := New(ws, projects)
	im.limits.Line = 1000
	b, err := im.Import(context.Background(), time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if summary(b.Events) != "use:pdf" || b.Events[0].ID != "ok" {
		t.Errorf("events = %s", summary(b.Events))
	}
	if b.Malformed != 6 || b.TooLong != 1 {
		t.Errorf("malformed %d (want 6), too long %d (want 1)", b.Malformed, b.TooLong)
	}
	// The first five are named by file and offset: the cut line at 0.
	if len(b.MalformedAt) != 5 || b.MalformedAt[0] != filepath.Join(projects, folder, "s.jsonl")+"@0" {
		t.Errorf("malformed at %q", b.MalformedAt)
	}
}

// TestImportSince: events before since are dropped and counted, and the
// marks move past them.
func TestImportSince(t *testing.T) {
	t.Parallel()
	ws, projects := t.TempDir(), t.TempDir()
	transcript(t, projects, FolderName(ws), "s.jsonl",
		skillLine("2026-02-01T10:00:00Z", ws, "old", `{"skill":"pdf"}`),
		skillLine("2026-03-01T10:00:00Z", ws, "new", `{"skill":"xlsx"}`))
	im := New(ws, projects)
	b, err := im.Import(context.Background(), time.Date(2026, 2, 15, 0, 0, 0, 0, time.UTC), nil)
	if err != nil || summary(b.Events) != "use:xlsx" || b.Before != 1 {
		t.Errorf("%s before %d %v", summary(b.Events), b.Before, err)
	}
}

// TestImportLeavesLinksAndMissingFolder: no projects folder is no error;
// links to transcripts elsewhere are not read.
func TestImportLeavesLinksAndMissingFolder(t *testing.T) {
	t.Parallel()
	ws, projects := t.TempDir(), t.TempDir()
	im := New(ws, filepath.Join(projects, "missing"))
	if b, err := im.Import(context.Background(), time.Time{}, nil); err != nil || len(b.Events) != 0 {
		t.Errorf("missing folder: %v %v", b, err)
	}
	outside := transcript(t, t.TempDir(), "x", "s.jsonl", skillLine("2026-03-01T10:00:00Z", ws, "t", `{"skill":"pdf"}`))
	if err := os.MkdirAll(filepath.Join(projects, FolderName(ws)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(projects, FolderName(ws), "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	b, err := New(ws, projects).Import(context.Background(), time.Time{}, nil)
	if err != nil || len(b.Events) != 0 {
		t.Errorf("a linked transcript was read: %v %v", summary(b.Events), err)
	}
}

func TestReadHook(t *testing.T) {
	t.Parallel()
	ev, err := ReadHook(hostenv.New("", nil), strings.NewReader(`{"session_id":"s","transcript_path":"/x.jsonl","cwd":"/w","permission_mode":"default","hook_event_name":"PostToolUse","tool_name":"Skill","tool_input":{"skill":"pdf","args":"a.pdf"},"tool_response":{"success":true},"tool_use_id":"toolu_1"}`))
	if err != nil || ev.Skill != "pdf" || ev.View || ev.ID != "toolu_1" || !ev.At.IsZero() {
		t.Errorf("skill call: %+v %v", ev, err)
	}
	ev, err = ReadHook(hostenv.New("", nil), strings.NewReader(`{"tool_name":"Read","cwd":"/w","tool_input":{"file_path":"skills/pdf/SKILL.md"}}`))
	if err != nil || !ev.View || ev.Path != "/w/skills/pdf/SKILL.md" {
		t.Errorf("read: %+v %v", ev, err)
	}
	if _, err := ReadHook(hostenv.New("", nil), strings.NewReader(`{"tool_name":"Bash","tool_input":{"command":"ls"}}`)); !errors.Is(err, ErrNoSkill) {
		t.Errorf("another tool: %v", err)
	}
	for name, in := range map[string]string{
		"empty":      ``,
		"not json":   `tool_name=Skill`,
		"a list":     `[{"tool_name":"Skill"}]`,
		"no tool":    `{"tool_input":{"skill":"pdf"}}`,
		"no skill":   `{"tool_name":"Skill","tool_input":{}}`,
		"bad input":  `{"tool_name":"Skill","tool_input":"pdf"}`,
		"too large":  `{"tool_name":"Skill","tool_input":{"skill":"pdf"},"x":"` + strings.Repeat("a", MaxHookInput) + `"}`,
		"nul in key": "{\"tool_name\":\"Skill\",\"tool_input\":{\"skill\":\"pdf\"}}\x00",
	} {
		if _, err := ReadHook(hostenv.New("", nil), strings.NewReader(in)); err == nil || errors.Is(err, ErrNoSkill) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

// TestImportPassesOverUnreadable: a transcript that cannot be read is
// listed and keeps its mark; the others are imported.
func TestImportPassesOverUnreadable(t *testing.T) {
	t.Parallel()
	ws, projects := t.TempDir(), t.TempDir()
	folder := FolderName(ws)
	transcript(t, projects, folder, "a.jsonl", skillLine("2026-03-01T10:00:00Z", ws, "t1", `{"skill":"pdf"}`))
	transcript(t, projects, folder, "b.jsonl", skillLine("2026-03-01T10:00:00Z", ws, "t2", `{"skill":"xlsx"}`))
	im := New(ws, projects)
	old := agent.Mark{Offset: 1, Hash: "kept"}
	im.read = func(ctx context.Context, path string, prev agent.Mark, lim agent.Limits, fn func([]byte, int64) error) (agent.Read, error) {
		if strings.HasSuffix(path, "b.jsonl") {
			return agent.Read{Mark: prev}, errors.New("open " + path + ": input/output error")
		}
		return agent.ReadNew(ctx, path, prev, lim, fn)
	}
	b, err := im.Import(context.Background(), time.Time{}, agent.Marks{folder + "/b.jsonl": old})
	if err != nil {
		t.Fatal(err)
	}
	if summary(b.Events) != "use:pdf" || len(b.Unreadable) != 1 || !strings.Contains(b.Unreadable[0], "b.jsonl") || b.Marks[folder+"/b.jsonl"] != old {
		t.Errorf("events %s, unreadable %v, marks %v", summary(b.Events), b.Unreadable, b.Marks)
	}
}

// TestImportPassesOverHugeTranscript: a transcript over the size limit is
// not read; it is listed with the reason, and the others are imported.
func TestImportPassesOverHugeTranscript(t *testing.T) {
	t.Parallel()
	ws, projects := t.TempDir(), t.TempDir()
	folder := FolderName(ws)
	transcript(t, projects, folder, "a.jsonl", skillLine("2026-03-01T10:00:00Z", ws, "t1", `{"skill":"pdf"}`))
	transcript(t, projects, folder, "b.jsonl", skillLine("2026-03-01T10:00:00Z", ws, "t2", `{"skill":"xlsx"}`), strings.Repeat("x", 4<<20))
	im := New(ws, projects)
	im.limits.File = 2 << 20
	b, err := im.Import(context.Background(), time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if summary(b.Events) != "use:pdf" || len(b.Unreadable) != 1 || !strings.Contains(b.Unreadable[0], "b.jsonl is 4 MiB, over the limit of 2 MiB") {
		t.Errorf("events %s, unreadable %v", summary(b.Events), b.Unreadable)
	}
}

// TestReadHookEvents: only a PostToolUse input is a use; the project is
// $CLAUDE_PROJECT_DIR, else the input's cwd.
func TestReadHookEvents(t *testing.T) {
	t.Parallel()
	env := hostenv.New("", []string{"CLAUDE_PROJECT_DIR="})
	pre := `{"hook_event_name":"PreToolUse","tool_name":"Skill","tool_input":{"skill":"pdf"},"tool_use_id":"toolu_1","cwd":"/w"}`
	if _, err := ReadHook(env, strings.NewReader(pre)); !errors.Is(err, ErrNoSkill) {
		t.Errorf("PreToolUse: %v", err)
	}
	post := strings.Replace(pre, "PreToolUse", "PostToolUse", 1)
	ev, err := ReadHook(env, strings.NewReader(post))
	if err != nil || ev.Skill != "pdf" || ev.ID != "toolu_1" || ev.Dir != "/w" {
		t.Errorf("PostToolUse: %+v %v", ev, err)
	}
	env = hostenv.New("", []string{"CLAUDE_PROJECT_DIR=/project"})
	if ev, _ := ReadHook(env, strings.NewReader(post)); ev.Dir != "/project" {
		t.Errorf("with CLAUDE_PROJECT_DIR: %+v", ev)
	}
}

// TestImportSlashCommands: /name in a user line, as a string or in text
// blocks, is a use from the slash source with an id made of its name and
// time; a name with a space or none is not.
func TestImportSlashCommands(t *testing.T) {
	t.Parallel()
	ws := filepath.Join(t.TempDir(), "w")
	projects := t.TempDir()
	transcript(t, projects, FolderName(ws), "a.jsonl",
		`{"type":"user","timestamp":"2026-03-01T10:00:00Z","cwd":"`+ws+`","message":{"role":"user","content":"<command-message>pdf</command-message>\n<command-name>/pdf</command-name>\n<command-args></command-args>"}}`,
		`{"type":"user","timestamp":"2026-03-01T10:01:00Z","cwd":"`+ws+`","message":{"role":"user","content":[{"type":"text","text":"<command-name>/docs:review</command-name>"}]}}`,
		`{"type":"user","timestamp":"2026-03-01T10:02:00Z","cwd":"`+ws+`","message":{"role":"user","content":"<command-name>/a b</command-name>"}}`,
		`{"type":"assistant","timestamp":"2026-03-01T10:03:00Z","cwd":"`+ws+`","message":{"content":[{"type":"text","text":"<command-name>/pdf</command-name>"}]}}`,
	)
	b, err := New(ws, projects).Import(context.Background(), time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(b.Events); got != "use:pdf use:docs:review" {
		t.Fatalf("events %s", got)
	}
	for _, ev := range b.Events {
		if ev.Source != agent.FromSlash || !strings.HasPrefix(ev.ID, "slash-") {
			t.Errorf("event %+v", ev)
		}
	}
	if b.Events[0].ID == b.Events[1].ID {
		t.Error("two commands share an id")
	}
}

// TestHookWithoutAnIDTakesTheTranscripts: a hook input with no
// tool_use_id (an early Claude Code 2.0) gets the id of the call from the
// end of the session's transcript, where the call was written before the
// tool ran, so an import does not count it again; with no transcript to
// read, it has none.
func TestHookWithoutAnIDTakesTheTranscripts(t *testing.T) {
	t.Parallel()
	ws, projects := t.TempDir(), t.TempDir()
	path := transcript(t, projects, FolderName(ws), "s.jsonl",
		skillLine("2026-03-01T10:00:00Z", ws, "toolu_A", `{"skill":"pdf"}`),
		skillLine("2026-03-01T10:00:01Z", ws, "toolu_B", `{"skill":"xlsx"}`),
		readLine("2026-03-01T10:00:02Z", ws, "toolu_R", "skills/pdf/SKILL.md"),
		skillLine("2026-03-01T10:00:03Z", ws, "toolu_C", `{"skill":"pdf"}`))
	env := hostenv.New("", []string{"CLAUDE_PROJECT_DIR="})
	hook := func(tool, input, transcript string) agent.Event {
		t.Helper()
		in := fmt.Sprintf(`{"hook_event_name":"PostToolUse","tool_name":%q,"tool_input":%s,"cwd":%q,"transcript_path":%q}`, tool, input, ws, transcript)
		ev, err := ReadHook(env, strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	for _, tc := range []struct{ tool, input, transcript, want string }{
		{"Skill", `{"skill":"pdf"}`, path, "toolu_C"},
		{"Skill", `{"skill":"xlsx"}`, path, "toolu_B"},
		{"Read", `{"file_path":"skills/pdf/SKILL.md"}`, path, "toolu_R"},
		{"Skill", `{"skill":"docx"}`, path, ""},
		{"Skill", `{"skill":"pdf"}`, filepath.Join(projects, "none.jsonl"), ""},
		{"Skill", `{"skill":"pdf"}`, "s.jsonl", ""},
	} {
		if ev := hook(tc.tool, tc.input, tc.transcript); ev.ID != tc.want {
			t.Errorf("%s %s from %s: id %q, want %q", tc.tool, tc.input, tc.transcript, ev.ID, tc.want)
		}
	}
}

// TestTornLineWithoutAnImportBetween: Claude Code killed in a write
// leaves a line unfinished, and its next write goes on on the same line.
// With no import between the two, the unfinished part is one malformed
// line and the call written after it is counted all the same.
func TestTornLineWithoutAnImportBetween(t *testing.T) {
	t.Parallel()
	ws, projects := t.TempDir(), t.TempDir()
	a := skillLine("2026-03-01T10:00:00Z", ws, "toolu_A", `{"skill":"notes"}`)
	b := skillLine("2026-03-01T10:01:00Z", ws, "toolu_B", `{"skill":"pdf"}`)
	transcript(t, projects, FolderName(ws), "s.jsonl", a[:120]+b)
	batch, err := New(ws, projects).Import(context.Background(), time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(batch.Events) != 1 || batch.Events[0].ID != "toolu_B" || batch.Events[0].Skill != "pdf" || batch.Malformed != 1 {
		t.Errorf("events %s, malformed %d; want toolu_B's use of pdf and one malformed line", summary(batch.Events), batch.Malformed)
	}
}

// TestLinkedProjectFolderIsSaid: a project folder of the workspace that
// is a symbolic link is not followed, and the batch says so rather than
// pass its calls over in silence.
func TestLinkedProjectFolderIsSaid(t *testing.T) {
	t.Parallel()
	ws, projects, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	transcript(t, elsewhere, "real", "s.jsonl", skillLine("2026-03-01T10:00:00Z", ws, "t1", `{"skill":"pdf"}`))
	if err := os.Symlink(filepath.Join(elsewhere, "real"), filepath.Join(projects, FolderName(ws))); err != nil {
		t.Skip(err)
	}
	b, err := New(ws, projects).Import(context.Background(), time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Events) != 0 || len(b.Unreadable) != 1 || !strings.Contains(b.Unreadable[0], "symbolic link") {
		t.Errorf("events %s, unreadable %q", summary(b.Events), b.Unreadable)
	}
}

// TestLinkedTranscriptIsSaid: a transcript in the workspace's project
// folder that is a symbolic link is not followed either, and the batch
// names it; the folder's other transcripts are read.
func TestLinkedTranscriptIsSaid(t *testing.T) {
	t.Parallel()
	ws, projects, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	transcript(t, elsewhere, "real", "s.jsonl", skillLine("2026-03-01T10:00:00Z", ws, "t1", `{"skill":"pdf"}`))
	transcript(t, projects, FolderName(ws), "own.jsonl", skillLine("2026-03-01T11:00:00Z", ws, "t2", `{"skill":"pdf"}`))
	link := filepath.Join(projects, FolderName(ws), "linked.jsonl")
	if err := os.Symlink(filepath.Join(elsewhere, "real", "s.jsonl"), link); err != nil {
		t.Skip(err)
	}
	b, err := New(ws, projects).Import(context.Background(), time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Events) != 1 || b.Events[0].ID != "t2" || len(b.Unreadable) != 1 || !strings.Contains(b.Unreadable[0], link) {
		t.Errorf("events %s, unreadable %q; want t2 read and %s named", summary(b.Events), b.Unreadable, link)
	}
}
