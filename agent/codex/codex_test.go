package codex

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/skilltest"
)

func TestSkillReads(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		argv   []string
		script string
		want   []string
	}{
		{argv: []string{"cat", "a/SKILL.md"}, want: []string{"/w/a/SKILL.md"}},
		{argv: []string{"bash", "-lc", "cd x && sed -n '1,80p' \"b c/SKILL.md\"; ls"}, want: []string{"/w/b c/SKILL.md"}},
		{script: "rg SKILL.md . | head -3", want: nil},
		{script: "head -n 5 /abs/SKILL.md /abs/other/SKILL.md", want: []string{"/abs/SKILL.md", "/abs/other/SKILL.md"}},
		{script: "vim a/SKILL.md", want: nil},
		{script: "cat a/README.md", want: nil},
		{script: "cat 'unterminated/SKILL.md", want: []string{"/w/unterminated/SKILL.md"}},
	} {
		if got := skillReads(c.argv, c.script, "/w"); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v %q: %v, want %v", c.argv, c.script, got, c.want)
		}
	}
}

// TestImportSurvivesHostileRollouts: a rollout that does not begin with a
// session_meta, one whose first line is endless, a link, a folder named
// like a rollout, lines that do not parse and a huge script: none stops
// the import or holds it.
func TestImportSurvivesHostileRollouts(t *testing.T) {
	t.Parallel()
	ws := filepath.Join(t.TempDir(), "w")
	sessions := t.TempDir()
	day := filepath.Join(sessions, "2026", "03", "01")
	meta := `{"timestamp":"2026-03-01T10:00:00Z","type":"session_meta","payload":{"id":"x","cwd":"` + ws + `"}}`
	read := `{"timestamp":"2026-03-01T10:00:01Z","type":"response_item","payload":{"type":"local_shell_call","call_id":"c1","action":{"type":"exec","command":["cat","` + ws + `/s/SKILL.md"]}}}`
	skilltest.AppendLines(t, filepath.Join(day, "rollout-a.jsonl"), meta, `{"type":"response_item","payload":{"SKILL.md":`, read,
		`{"timestamp":"2026-03-01T10:00:02Z","type":"response_item","payload":{"type":"function_call","name":"shell_command","arguments":"{\"command\":\"cat `+strings.Repeat("x ", 100_000)+` s/SKILL.md\"}","call_id":"c2"}}`)
	skilltest.AppendLines(t, filepath.Join(day, "rollout-b.jsonl"), read)
	skilltest.AppendLines(t, filepath.Join(day, "rollout-c.jsonl"), `{"type":"session_meta","payload":{"cwd":"`+ws+`","x":"`+strings.Repeat("y", 2<<20)+`"}}`, read)
	if err := os.Symlink(filepath.Join(day, "rollout-a.jsonl"), filepath.Join(day, "rollout-link.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(day, "rollout-dir.jsonl"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := New(ws, sessions).Import(context.Background(), time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Events) != 1 || b.Events[0].Path != filepath.Join(ws, "s", "SKILL.md") || b.Events[0].ID != "c1" || b.Malformed != 1 || b.Files != 1 ||
		len(b.MalformedAt) != 1 || !strings.HasPrefix(b.MalformedAt[0], day) {
		t.Errorf("batch %+v", b)
	}
}

// TestAForkKeepsTheIDsOfTheSkillsItCopies: Codex writes a fork (a
// backtrack, /fork) as its own session_meta (forked_from_id), then a
// copy of the parent's lines, its session_meta first, each stamped with
// the time of the copy (codex-rs core/src/rollout/recorder.rs:
// JsonlWriter stamps every line it writes), then the fork's own turns. A
// skill the user named is the same call in the copy, and another one in
// the fork's own turns and in another session that opened the same way.
func TestAForkKeepsTheIDsOfTheSkillsItCopies(t *testing.T) {
	t.Parallel()
	ws := filepath.Join(t.TempDir(), "w")
	sessions := t.TempDir()
	day := filepath.Join(sessions, "2026", "03", "01")
	meta := func(at, id, extra string) string {
		return `{"timestamp":"` + at + `","type":"session_meta","payload":{"id":"` + id + `",` + extra + `"timestamp":"` + at + `","cwd":"` + ws + `","originator":"codex_cli_rs","cli_version":"0.80.0","source":"cli"}}`
	}
	turn := func(at string) string {
		return `{"timestamp":"` + at + `","type":"turn_context","payload":{"cwd":"` + ws + `","approval_policy":"on-request","sandbox_policy":{"mode":"workspace-write"},"model":"gpt-5-codex","summary":"auto"}}`
	}
	user := func(at, text string) string {
		return `{"timestamp":"` + at + `","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"` + text + `"}]}}`
	}
	inject := func(at string) string {
		return user(at, `<skill>\n<name>notes</name>\n<path>`+ws+`/skills/notes/SKILL.md</path>\n# Notes\n</skill>`)
	}
	parent := []string{meta("2026-03-01T10:00:00.000Z", "P", ""), turn("2026-03-01T10:00:00.100Z"),
		user("2026-03-01T10:00:01.000Z", "use $notes for the changelog"), inject("2026-03-01T10:00:01.000Z")}
	skilltest.AppendLines(t, filepath.Join(day, "rollout-2026-03-01T10-00-00-P.jsonl"), parent...)
	var fork []string
	fork = append(fork, meta("2026-03-01T11:00:00.000Z", "F", `"forked_from_id":"P",`))
	for _, line := range parent { // the copy, stamped anew
		fork = append(fork, strings.Replace(line, `"timestamp":"2026-03-01T10:`, `"timestamp":"2026-03-01T11:`, 1))
	}
	fork = append(fork, turn("2026-03-01T11:05:00.000Z"), user("2026-03-01T11:05:01.000Z", "and $notes for the readme"), inject("2026-03-01T11:05:01.000Z"))
	skilltest.AppendLines(t, filepath.Join(day, "rollout-2026-03-01T11-00-00-F.jsonl"), fork...)
	skilltest.AppendLines(t, filepath.Join(day, "rollout-2026-03-01T12-00-00-N.jsonl"), meta("2026-03-01T12:00:00.000Z", "N", ""), turn("2026-03-01T12:00:00.100Z"),
		user("2026-03-01T12:00:01.000Z", "use $notes for the changelog"), inject("2026-03-01T12:00:01.000Z"))

	b, err := New(ws, sessions).Import(context.Background(), time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string][]string{} // by the file's session
	for _, ev := range b.Events {
		if ev.Skill != "notes" {
			t.Fatalf("event %+v", ev)
		}
		for _, s := range []string{"P", "F", "N"} {
			if strings.Contains(ev.Where, "-"+s+".jsonl") {
				ids[s] = append(ids[s], ev.ID)
			}
		}
	}
	if len(ids["P"]) != 1 || len(ids["F"]) != 2 || len(ids["N"]) != 1 {
		t.Fatalf("events by session: %v", ids)
	}
	if ids["F"][0] != ids["P"][0] {
		t.Errorf("the fork's copy of the skill is another call: %s, the parent's %s", ids["F"][0], ids["P"][0])
	}
	if ids["F"][1] == ids["P"][0] || ids["N"][0] == ids["P"][0] {
		t.Errorf("new calls taken for the parent's: %v", ids)
	}

	// Read in two imports, the fork's own turn after the first: the mark
	// keeps the conversation, and the ids are the same.
	later := t.TempDir()
	path := filepath.Join(later, "2026", "03", "01", "rollout-2026-03-01T11-00-00-F.jsonl")
	skilltest.AppendLines(t, path, fork[:len(parent)+1]...)
	first, err := New(ws, later).Import(context.Background(), time.Time{}, nil)
	if err != nil || len(first.Events) != 1 || first.Events[0].ID != ids["P"][0] {
		t.Fatalf("the copy alone: %+v %v", first, err)
	}
	skilltest.AppendLines(t, path, fork[len(parent)+1:]...)
	second, err := New(ws, later).Import(context.Background(), time.Time{}, first.Marks)
	if err != nil || len(second.Events) != 1 || second.Events[0].ID != ids["F"][1] {
		t.Fatalf("the fork's own turn, read after the copy: %+v %v, want id %s", second, err, ids["F"][1])
	}
}

// TestAnArchivedRolloutIsReadOn: archiving a thread (codex archive, the
// app's thread/archive) moves its rollout from sessions/YYYY/MM/DD to
// $CODEX_HOME/archived_sessions. The calls written since the last import
// are counted from there, going on from the mark the rollout had below
// sessions: those read before do not come again. A mark an older
// skillsync wrote (no conversation hash) counts them once too: read
// again, the skill the user named would come with an id made another way
// than the one that skillsync counted it under, and count twice.
func TestAnArchivedRolloutIsReadOn(t *testing.T) {
	t.Parallel()
	ws := filepath.Join(t.TempDir(), "w")
	home := t.TempDir()
	sessions := filepath.Join(home, "sessions")
	name := "rollout-2026-03-01T10-00-00-0199a1b2-0000-7000-8000-00000000000a.jsonl"
	path := filepath.Join(sessions, "2026", "03", "01", name)
	skilltest.AppendLines(t, path,
		`{"timestamp":"2026-03-01T10:00:00.000Z","type":"session_meta","payload":{"id":"0199a1b2-0000-7000-8000-00000000000a","timestamp":"2026-03-01T10:00:00.000Z","cwd":"`+ws+`","originator":"codex_cli_rs","cli_version":"0.80.0","source":"cli"}}`,
		`{"timestamp":"2026-03-01T10:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<skill>\n<name>notes</name>\n<path>`+ws+`/skills/notes/SKILL.md</path>\n# Notes\n</skill>"}]}}`)
	im := New(ws, sessions)
	first, err := im.Import(context.Background(), time.Time{}, nil)
	if err != nil || len(first.Events) != 1 {
		t.Fatalf("first import: %+v %v", first, err)
	}
	key := "2026/03/01/" + name
	old := first.Marks[key]
	if old.Offset == 0 {
		t.Fatalf("first import: no mark of %s in %v", key, first.Marks)
	}
	old.Chain = "" // as the last release wrote it
	first.Marks[key] = old
	skilltest.AppendLines(t, path,
		`{"timestamp":"2026-03-01T10:05:00.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"cat\",\"`+ws+`/skills/kept/SKILL.md\"]}","call_id":"call_7"}}`)
	archived := filepath.Join(home, "archived_sessions")
	if err := os.MkdirAll(archived, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, filepath.Join(archived, name)); err != nil {
		t.Fatal(err)
	}
	second, err := im.Import(context.Background(), time.Time{}, first.Marks)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ev := range second.Events {
		ids = append(ids, ev.ID)
	}
	if want := []string{"call_7"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("after the archive: calls %v, want %v", ids, want)
	}
	third, err := im.Import(context.Background(), time.Time{}, second.Marks)
	if err != nil || len(third.Events) != 0 || third.Files != 0 {
		t.Fatalf("third import: %+v %v", third, err)
	}
	// Taken out of the archive (thread/unarchive), it goes on from the
	// mark it had there.
	if err := os.Rename(filepath.Join(archived, name), path); err != nil {
		t.Fatal(err)
	}
	skilltest.AppendLines(t, path,
		`{"timestamp":"2026-03-01T10:06:00.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"cat\",\"`+ws+`/skills/kept/SKILL.md\"]}","call_id":"call_8"}}`)
	fourth, err := im.Import(context.Background(), time.Time{}, third.Marks)
	if err != nil {
		t.Fatal(err)
	}
	ids = nil
	for _, ev := range fourth.Events {
		ids = append(ids, ev.ID)
	}
	if want := []string{"call_8"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("after taken out of the archive: calls %v, want %v", ids, want)
	}
}
