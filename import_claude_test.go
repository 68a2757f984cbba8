package skillsync

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/agent/claude"
	"github.com/skillsync/skillsync/agent/codex"
	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/internal/flock"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// claudeFixture copies testdata/agents/claude/-WS (see its README) to the
// project folder Claude Code keeps ws's sessions in, under projects, with
// {{WS}} made ws.
func claudeFixture(t *testing.T, ws, projects string) string {
	t.Helper()
	quoted, _ := json.Marshal(ws)
	esc := string(quoted[1 : len(quoted)-1])
	src := filepath.Join("testdata", "agents", "claude", "-WS")
	dst := filepath.Join(projects, claude.FolderName(ws))
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, []byte(strings.ReplaceAll(string(data), "{{WS}}", esc)), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// importWorkspace is curateWorkspace with its clock after the agents'
// fixtures (testdata/agents, March 2026): an import passes over a call
// dated more than a day past the clock.
func importWorkspace(t *testing.T) (*Engine, *clock, string) {
	t.Helper()
	e, c, ws := curateWorkspace(t)
	c.t = time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	return e, c, ws
}

func usageRecord(t *testing.T, e *Engine, key string) curator.SkillUsage {
	t.Helper()
	u, err := e.Usage().Load()
	if err != nil {
		t.Fatal(err)
	}
	c, err := curator.ParseCopy(key)
	if err != nil {
		t.Fatal(err)
	}
	if r := u.Skills[c]; r != nil {
		return *r
	}
	return curator.SkillUsage{}
}

// TestImportCountsEachCallOnce: a resumed session and a fork hold copies
// of the calls of the session they continue, a subagent's calls are in a
// file of their own, a call the hook recorded is in the transcript too, a
// user starts a skill with /name, and a transcript is rewritten shorter:
// every call is counted exactly once.
func TestImportCountsEachCallOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _, ws := importWorkspace(t)
	projects := t.TempDir()
	dir := claudeFixture(t, ws, projects)

	// The hook saw toolu_04 as it happened, and was sent it twice.
	for i := 0; i < 2; i++ {
		name, dup, err := e.RecordHook(ctx, claude.Name, agent.Event{Skill: "notes", ID: "toolu_04", At: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)})
		if err != nil || name != "notes" || dup != (i == 1) {
			t.Fatalf("hook %d: %s %v %v", i, name, dup, err)
		}
	}
	r, err := e.ImportUsage(ctx, claude.New(ws, projects), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	// notes: /notes, toolu_01, toolu_06 (and toolu_04 by the hook); kept:
	// toolu_02 (the "command" input), toolu_05 (the subagent); a view:
	// toolu_03. The copies in b.jsonl (4) and c.jsonl (1) are duplicates;
	// /clear is Claude Code's own command.
	if r.Uses != 5 || r.Views != 1 || r.Hooked != 1 || r.Duplicates != 5 || r.Unknown != 0 || r.Files != 4 {
		t.Errorf("first import: %+v", r)
	}
	notes, kept := usageRecord(t, e, "workspace/notes"), usageRecord(t, e, "workspace/kept")
	if notes.UseCount != 4 || notes.ViewCount != 1 || kept.UseCount != 2 || kept.ViewCount != 0 {
		t.Errorf("after the import: notes %+v, kept %+v", notes, kept)
	}
	if notes.LastSource != curator.FromImport && notes.LastSource != curator.FromSlash {
		t.Errorf("notes last_source %s", notes.LastSource)
	}

	// a.jsonl rewritten shorter (Claude Code compacts and rewrites): read
	// again from its start, nothing in it is counted again.
	a := filepath.Join(dir, "a.jsonl")
	data, _ := os.ReadFile(a)
	lines := strings.SplitAfter(string(data), "\n")
	if err := os.WriteFile(a, []byte(lines[0]+lines[1]), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err = e.ImportUsage(ctx, claude.New(ws, projects), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Uses != 0 || r.Views != 0 || r.Rewritten != 1 || r.Duplicates != 2 {
		t.Errorf("after the rewrite: %+v", r)
	}
	if n := usageRecord(t, e, "workspace/notes"); n.UseCount != 4 {
		t.Errorf("notes after the rewrite: %+v", n)
	}

	// The hook sent again a call an import counted (and so took out of
	// the hook's journal): still once.
	if _, dup, err := e.RecordHook(ctx, claude.Name, agent.Event{Skill: "notes", ID: "toolu_04"}); err != nil || !dup {
		t.Fatalf("a call imported before: %v %v", dup, err)
	}
	// A new call the hook reports is counted.
	if _, dup, err := e.RecordHook(ctx, claude.Name, agent.Event{Skill: "notes", ID: "toolu_07"}); err != nil || dup {
		t.Fatalf("a new hooked call: %v %v", dup, err)
	}
	if n := usageRecord(t, e, "workspace/notes"); n.UseCount != 5 {
		t.Errorf("notes after a new hooked call: %+v", n)
	}
}

// TestFailedImportKeepsTheHooksCalls: an import whose recording fails
// leaves the calls the hook journaled in its journal, so the next import
// does not count them a second time from the transcript.
func TestFailedImportKeepsTheHooksCalls(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _, ws := importWorkspace(t)
	projects := t.TempDir()
	claudeFixture(t, ws, projects)
	if _, _, err := e.RecordHook(ctx, claude.Name, agent.Event{Skill: "notes", ID: "toolu_04"}); err != nil {
		t.Fatal(err)
	}
	usage := filepath.Join(ws, "skills", ".usage.json")
	if err := os.Rename(usage, usage+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(usage, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ImportUsage(ctx, claude.New(ws, projects), time.Time{}); err == nil {
		t.Fatal("an import whose usage file is a folder recorded its uses")
	}
	if err := os.Remove(usage); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(usage+".away", usage); err != nil {
		t.Fatal(err)
	}
	r, err := e.ImportUsage(ctx, claude.New(ws, projects), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	// As in TestImportCountsEachCallOnce: the hook's call counted once.
	if n := usageRecord(t, e, "workspace/notes"); r.Hooked != 1 || n.UseCount != 4 {
		t.Errorf("after a failed import and one that worked: %+v, notes %+v", r, n)
	}
}

// TestHookDuringImportCountsOnce: the hook reports a call an import is
// counting (it has read the transcript and waits to record, longer than
// a hook used to wait for the journal): the hook waits for the import's
// marks and finds the call counted.
func TestHookDuringImportCountsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _, ws := importWorkspace(t)
	projects := t.TempDir()
	claudeFixture(t, ws, projects)
	// The usage file's lock held: the import reads, then waits to record.
	held, err := flock.Acquire(ctx, filepath.Join(ws, "skills", ".usage.json.lock"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	imported := make(chan error, 1)
	go func() {
		_, err := e.ImportUsage(ctx, claude.New(ws, projects), time.Time{})
		imported <- err
	}()
	// Until the import holds the hook's journal.
	journal := filepath.Join(ws, "skills", ".hooked.jsonl.lock")
	for deadline := time.Now().Add(time.Minute); ; {
		l, err := flock.Acquire(ctx, journal, 0)
		if err != nil {
			break
		}
		l.Close()
		if time.Now().After(deadline) {
			t.Fatal("the import never held the hook's journal")
		}
		time.Sleep(10 * time.Millisecond)
	}
	type hookResult struct {
		dup bool
		err error
	}
	hooked := make(chan hookResult, 1)
	go func() {
		_, dup, err := e.RecordHook(ctx, claude.Name, agent.Event{Skill: "notes", ID: "toolu_04"})
		hooked <- hookResult{dup, err}
	}()
	time.Sleep(6 * time.Second)
	held.Close()
	if err := <-imported; err != nil {
		t.Fatal(err)
	}
	h := <-hooked
	if h.err != nil {
		t.Fatal(h.err)
	}
	// notes: /notes, toolu_01, toolu_04 and toolu_06, each once.
	if n := usageRecord(t, e, "workspace/notes"); n.UseCount != 4 || !h.dup {
		t.Errorf("a call the hook reported while an import counted it: dup %v, notes %+v", h.dup, n)
	}
}

// TestHookCountsALongIDOnce: a call whose id is too long, or not
// printable, to be journaled as it is, is journaled by its hash: sent
// twice, it counts once.
func TestHookCountsALongIDOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _, _ := importWorkspace(t)
	for _, id := range []string{strings.Repeat("x", 300), "tab\tid"} {
		for i := 0; i < 2; i++ {
			if _, dup, err := e.RecordHook(ctx, claude.Name, agent.Event{Skill: "kept", ID: id}); err != nil || dup != (i == 1) {
				t.Errorf("hook %d of id %.10q: dup %v, %v", i, id, dup, err)
			}
		}
	}
	if n := usageRecord(t, e, "workspace/kept"); n.UseCount != 2 {
		t.Errorf("kept after two calls each sent twice: %+v", n)
	}
}

// claudeCall is one Skill call as Claude Code writes it in a transcript.
func claudeCall(ws, id, skill, at string) string {
	quoted, _ := json.Marshal(ws)
	return `{"parentUuid":null,"isSidechain":false,"type":"assistant","message":{"id":"msg_` + id + `","role":"assistant","content":[{"type":"tool_use","id":"` + id +
		`","name":"Skill","input":{"skill":"` + skill + `"}}]},"uuid":"u-` + id + `","timestamp":"` + at + `","cwd":` + string(quoted) + `,"sessionId":"S","version":"2.1.3"}` + "\n"
}

// TestFutureCallsAreNotCounted: a call dated far past the clock is
// passed over and kept out of the set of calls seen, where (past its
// bound) it would have moved the floor into the future and passed every
// real call after it over as counted. A floor in the future that an
// older skillsync or a hand left is taken back.
func TestFutureCallsAreNotCounted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _, ws := curateWorkspace(t) // the clock: 2026-01-01
	projects := t.TempDir()
	dir := filepath.Join(projects, claude.FolderName(ws))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(dir, "s.jsonl")
	write := func(lines ...string) {
		t.Helper()
		f, err := os.OpenFile(transcript, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(strings.Join(lines, "")); err != nil {
			t.Fatal(err)
		}
	}
	write(claudeCall(ws, "toolu_F", "notes", "9999-12-31T00:00:00.000Z"), claudeCall(ws, "toolu_R", "notes", "2025-12-30T10:00:00.000Z"))
	r, err := e.ImportUsage(ctx, claude.New(ws, projects), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	notes := usageRecord(t, e, "workspace/notes")
	if r.Uses != 1 || r.Future != 1 || notes.UseCount != 1 || notes.LastUsedAt == nil || notes.LastUsedAt.Year() != 2025 {
		t.Fatalf("first import: %+v, notes %+v", r, notes)
	}

	// A floor in the future, as a hand or an older skillsync left it.
	path := e.Layout().ImportedFile()
	state, err := agent.LoadState(path)
	if err != nil {
		t.Fatal(err)
	}
	if seen := state.Seen[claude.Name]; seen == nil || len(seen.IDs) != 1 {
		t.Fatalf("the calls seen: %+v", seen)
	}
	state.Seen[claude.Name].Floor = time.Date(9000, 1, 1, 0, 0, 0, 0, time.UTC)
	state.Seen[claude.Name].IDs["toolu_X"] = time.Date(9000, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := state.Save(path); err != nil {
		t.Fatal(err)
	}
	write(claudeCall(ws, "toolu_S", "notes", "2025-12-31T10:00:00.000Z"))
	if r, err = e.ImportUsage(ctx, claude.New(ws, projects), time.Time{}); err != nil || r.Uses != 1 || r.Duplicates != 0 {
		t.Fatalf("a real call after a floor in the future: %+v %v", r, err)
	}
	if n := usageRecord(t, e, "workspace/notes"); n.UseCount != 2 {
		t.Errorf("notes: %+v, want 2 uses", n)
	}
}

// TestNestedWorkspaceCountsItsOwnSessions: a session run in a workspace
// nested in another (a folder below it with a config of its own) is
// counted by the nested one alone, though Claude Code's folder for it
// begins with the outer one's name, and though it moved into the outer
// one (cd ..) before its second call: it uses the skills of the
// workspace it started in. A session started in a plain folder of the
// outer workspace is the outer one's wherever it went.
func TestNestedWorkspaceCountsItsOwnSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	outerEng, outerClock, outer := curateWorkspace(t)
	outerClock.t = time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	inner := filepath.Join(outer, "sub")
	cfgText := "repositories:\n  - embedded: builtin\ntargets:\n  - dir: .claude/skills\n"
	skilltest.WriteFile(t, filepath.Join(inner, config.FileName), cfgText)
	skilltest.Skill(t, filepath.Join(inner, "skills"), "notes", "The inner notes skill.", nil)
	innerEng := NewEngine(loadConfig(t, filepath.Join(inner, config.FileName)), WithClock(outerClock.now))
	mustSync(t, innerEng, SyncOptions{})

	projects := t.TempDir()
	dir := filepath.Join(projects, claude.FolderName(inner))
	skilltest.WriteFile(t, filepath.Join(dir, "s.jsonl"), claudeCall(inner, "toolu_N1", "notes", "2026-03-01T10:00:00.000Z")+
		claudeCall(outer, "toolu_N2", "notes", "2026-03-01T10:05:00.000Z"))
	plain := filepath.Join(outer, "docs")
	if err := os.MkdirAll(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	skilltest.WriteFile(t, filepath.Join(projects, claude.FolderName(plain), "p.jsonl"), claudeCall(plain, "toolu_P1", "kept", "2026-03-01T11:00:00.000Z")+
		claudeCall(t.TempDir(), "toolu_P2", "kept", "2026-03-01T11:05:00.000Z"))
	for _, e := range []*Engine{innerEng, outerEng} {
		if _, err := e.ImportUsage(ctx, claude.New(e.Config().Workspace, projects), time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := usageRecord(t, innerEng, "workspace/notes"); n.UseCount != 2 {
		t.Errorf("the nested workspace's notes: %+v, want 2 uses", n)
	}
	if n := usageRecord(t, outerEng, "workspace/notes"); n.UseCount != 0 {
		t.Errorf("the outer workspace counted the nested one's calls: %+v", n)
	}
	if n := usageRecord(t, outerEng, "workspace/kept"); n.UseCount != 2 {
		t.Errorf("the outer workspace's kept: %+v, want the 2 uses of the session started in docs/", n)
	}
}

// TestCallsOfTheUsersOwnSkillAreNotCredited: a folder of the user's
// stands in .claude/skills where the workspace's notes would go, so the
// sync leaves notes out of that target. What Claude Code calls or reads
// as notes is then the user's own skill: neither its hook nor an import
// credits it to the workspace's. kept, which the target holds, is
// credited, and so is a call of notes by Codex, which reads no target of
// this workspace.
func TestCallsOfTheUsersOwnSkillAreNotCredited(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg, ws := workspaceConfig(t, "targets:\n  - dir: .claude/skills\n")
	skilltest.Skill(t, filepath.Join(ws, "skills"), "notes", "The notes skill.", nil)
	skilltest.Skill(t, filepath.Join(ws, "skills"), "kept", "The kept skill.", nil)
	targetDir := filepath.Join(ws, ".claude", "skills")
	skilltest.Skill(t, targetDir, "notes", "The user's own notes.", nil)
	c := &clock{t: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)}
	e := NewEngine(cfg, WithClock(c.now), WithWarnings(func(w string) { t.Log(w) }))
	mustSync(t, e, SyncOptions{})
	if data, err := os.ReadFile(filepath.Join(targetDir, "notes", "SKILL.md")); err != nil || !strings.Contains(string(data), "user's own") {
		t.Fatalf("the user's notes in the target: %q %v", data, err)
	}

	for _, ev := range []agent.Event{
		{Skill: "notes", ID: "toolu_N"},
		{Path: filepath.Join(targetDir, "notes", "SKILL.md"), View: true, ID: "toolu_P"},
	} {
		var unknown *UnknownSkillError
		if _, _, err := e.RecordHook(ctx, claude.Name, ev); !errors.As(err, &unknown) {
			t.Errorf("hook of %+v: %v, want the skill taken as not the workspace's", ev, err)
		}
	}
	for _, ev := range []agent.Event{
		{Skill: "kept", ID: "toolu_K"},
		{Path: filepath.Join(targetDir, "kept", "SKILL.md"), View: true, ID: "toolu_V"},
	} {
		if _, _, err := e.RecordHook(ctx, claude.Name, ev); err != nil {
			t.Errorf("hook of %+v: %v", ev, err)
		}
	}
	if _, _, err := e.RecordHook(ctx, codex.Name, agent.Event{Skill: "notes", ID: "codex_1"}); err != nil {
		t.Errorf("Codex's call of notes: %v", err)
	}

	projects := t.TempDir()
	dir := filepath.Join(projects, claude.FolderName(ws))
	skilltest.WriteFile(t, filepath.Join(dir, "s.jsonl"), claudeCall(ws, "toolu_I", "notes", "2026-03-01T10:00:00.000Z"))
	r, err := e.ImportUsage(ctx, claude.New(ws, projects), time.Time{})
	if err != nil || r.Uses != 0 || r.Unknown != 1 {
		t.Errorf("import of a call of the user's notes: %+v %v", r, err)
	}

	if n := usageRecord(t, e, "workspace/notes"); n.UseCount != 1 || n.ViewCount != 0 {
		t.Errorf("notes: %+v, want Codex's one use", n)
	}
	if n := usageRecord(t, e, "workspace/kept"); n.UseCount != 1 || n.ViewCount != 1 {
		t.Errorf("kept: %+v, want one use and one view", n)
	}
}
