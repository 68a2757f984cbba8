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
