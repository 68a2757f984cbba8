package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/agent/claude"
)

// TestAClockSteppedBackForgetsNoCountedCall: an import run while the
// machine's clock was stepped back more than a day (a VM restored from a
// snapshot, a clock before its first NTP sync) finds the calls counted
// before dated past the clock. It keeps them in the set of calls seen, so
// that once the clock is right again a resumed session's copy of one is a
// duplicate, not a second use.
func TestAClockSteppedBackForgetsNoCountedCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws, projects, store, j, rec := usageWorkspace(t)
	now := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC) // the call: 2026-03-01T10:00
	j.Now = func() time.Time { return now }
	claudeTranscript(t, ws, projects, "pdf", "toolu_1")
	if r, err := j.Import(ctx, rec, claude.New(ws, projects), time.Time{}); err != nil || r.Uses != 1 {
		t.Fatalf("first import: %+v %v", r, err)
	}

	now = time.Date(2026, 2, 20, 0, 0, 0, 0, time.UTC) // stepped back
	if r, err := j.Import(ctx, rec, claude.New(ws, projects), time.Time{}); err != nil || r.Uses != 0 {
		t.Fatalf("import while the clock was behind: %+v %v", r, err)
	}

	now = time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC) // right again
	// The session resumed: Claude Code's new transcript begins with a
	// copy of the first's lines, then a new call.
	dir := filepath.Join(projects, claude.FolderName(ws))
	first, err := os.ReadFile(filepath.Join(dir, "s.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	claudeTranscript(t, ws, projects, "pdf", "toolu_2")
	second, err := os.ReadFile(filepath.Join(dir, "s.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "s.jsonl"), first, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "resumed.jsonl"), append(first, second...), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := j.Import(ctx, rec, claude.New(ws, projects), time.Time{})
	if err != nil || r.Uses != 1 || r.Duplicates != 1 {
		t.Fatalf("the resumed session: %+v %v", r, err)
	}
	if n := useCount(t, store, "pdf"); n != 2 {
		t.Errorf("pdf used %d times, want 2", n)
	}
	if state, err := agent.LoadState(j.StatePath); err != nil || !state.Seen[claude.Name].Floor.IsZero() {
		t.Errorf("the calls seen: %+v %v", state.Seen[claude.Name], err)
	}
}

// TestACallMadeBeforeTheClockSteppedBackCounts: a call its agent
// recorded while the machine's clock was right, imported once the clock
// had stepped back more than a day (a VM restored from a snapshot, a
// machine before its first NTP sync), is counted: its record was written
// after it, by the clock that was right. Passed over, it was lost, as the
// marks moved past it. A call dated past both the clock and its record
// is still passed over.
func TestACallMadeBeforeTheClockSteppedBackCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws, projects, store, j, rec := usageWorkspace(t)
	now := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC) // a month behind the call
	j.Now = func() time.Time { return now }
	claudeTranscript(t, ws, projects, "pdf", "toolu_1") // made 2026-03-01T10:00
	transcript := filepath.Join(projects, claude.FolderName(ws), "s.jsonl")
	written := time.Date(2026, 3, 1, 10, 0, 5, 0, time.UTC)
	if err := os.Chtimes(transcript, written, written); err != nil {
		t.Fatal(err)
	}
	r, err := j.Import(ctx, rec, claude.New(ws, projects), time.Time{})
	if err != nil || r.Uses != 1 || r.Future != 0 {
		t.Fatalf("the import while the clock was behind: %+v %v", r, err)
	}
	now = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	if r, err := j.Import(ctx, rec, claude.New(ws, projects), time.Time{}); err != nil || r.Uses != 0 {
		t.Fatalf("the import once the clock was right: %+v %v", r, err)
	}
	if n := useCount(t, store, "pdf"); n != 1 {
		t.Errorf("pdf counted %d times, want once", n)
	}

	// A call dated past its record too: no agent wrote it so.
	f, err := os.OpenFile(transcript, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	line := `{"type":"assistant","timestamp":"9999-12-31T00:00:00.000Z","cwd":"` + ws + `","sessionId":"S","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_F","name":"Skill","input":{"skill":"pdf"}}]}}` + "\n"
	if _, err := f.WriteString(line); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(transcript, written.Add(time.Hour), written.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if r, err := j.Import(ctx, rec, claude.New(ws, projects), time.Time{}); err != nil || r.Uses != 0 || r.Future != 1 {
		t.Fatalf("a call dated past its record: %+v %v", r, err)
	}
}

// TestAFutureRecordLiftsOnlyItsOwnCalls: how far past the clock a call
// may be dated is judged by the record that holds it. One transcript
// written far in the future (touched, or copied from a machine whose
// clock ran ahead) let every other transcript's calls dated up to then
// count, and a call dated next year kept its skill fresh for a year.
func TestAFutureRecordLiftsOnlyItsOwnCalls(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws, projects, store, j, rec := usageWorkspace(t)
	now := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	j.Now = func() time.Time { return now }
	claudeTranscript(t, ws, projects, "pdf", "toolu_1") // made 2026-03-01T10:00
	dir := filepath.Join(projects, claude.FolderName(ws))
	written := time.Date(2026, 3, 1, 10, 0, 5, 0, time.UTC)
	ahead := `{"type":"assistant","timestamp":"2027-06-01T00:00:00.000Z","cwd":"` + ws + `","sessionId":"A","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_A","name":"Skill","input":{"skill":"pdf"}}]}}` + "\n"
	for name, f := range map[string]struct {
		text string
		at   time.Time
	}{
		"s.jsonl":       {"", written},
		"ahead.jsonl":   {ahead, written},
		"touched.jsonl": {`{"type":"user","timestamp":"2026-03-01T09:00:00.000Z","cwd":"` + ws + `","sessionId":"T","message":{"role":"user","content":"hi"}}` + "\n", time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		file := filepath.Join(dir, name)
		if f.text != "" {
			if err := os.WriteFile(file, []byte(f.text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(file, f.at, f.at); err != nil {
			t.Fatal(err)
		}
	}
	r, err := j.Import(ctx, rec, claude.New(ws, projects), time.Time{})
	if err != nil || r.Uses != 1 || r.Future != 1 {
		t.Fatalf("import: %+v %v, want the call of 2027 passed over", r, err)
	}
	if n := useCount(t, store, "pdf"); n != 1 {
		t.Errorf("pdf counted %d times, want once", n)
	}
}
