package skillsync

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/agent/claude"
)

// TestImportWithAHookJournalFromABackup: Claude Code's hook counts
// toolu_01, toolu_02 and toolu_04 as they happen; the hooks' journal is
// then brought back from a backup taken after the first, the usage file
// current (naming toolu_04, the last: the backup lacking it alone would
// count nothing twice). The import refuses, naming the journal and the
// --since that counts nothing twice; with it, no call counts twice, and
// the next import needs no --since.
func TestImportWithAHookJournalFromABackup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _, ws := importWorkspace(t)
	projects := t.TempDir()
	claudeFixture(t, ws, projects)
	journal := filepath.Join(ws, "skills", ".hooked.jsonl")
	hook := func(skill, id string) {
		t.Helper()
		if _, dup, err := e.RecordHook(ctx, claude.Name, agent.Event{Skill: skill, ID: id}); err != nil || dup {
			t.Fatalf("the hook of %s: %v %v", id, dup, err)
		}
	}
	hook("notes", "toolu_01")
	backup, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	hook("kept", "toolu_02")
	hook("notes", "toolu_04")
	if err := os.WriteFile(journal, backup, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := e.ImportUsage(ctx, claude.New(ws, projects), time.Time{})
	if err == nil || !strings.Contains(err.Error(), journal) || !strings.Contains(err.Error(), "--since ") {
		t.Fatalf("the import: %+v, %v; want a refusal naming %s and --since", r, err, journal)
	}
	if notes, kept := usageRecord(t, e, "workspace/notes"), usageRecord(t, e, "workspace/kept"); notes.UseCount != 2 || kept.UseCount != 1 {
		t.Fatalf("after the refusal: notes %+v, kept %+v", notes, kept)
	}
	_, rest, _ := strings.Cut(err.Error(), "--since ")
	since, perr := time.Parse(time.RFC3339, strings.Fields(rest)[0])
	if perr != nil {
		t.Fatalf("the --since of %v: %v", err, perr)
	}
	if _, err := e.ImportUsage(ctx, claude.New(ws, projects), since); err != nil {
		t.Fatalf("the import with --since %s: %v", since, err)
	}
	// Since just after toolu_04 (2 March): toolu_06 (3 March) counts; the
	// hooks' three count once; the calls before it no hook recorded
	// (/notes, the view toolu_03, toolu_05) are passed over, as the error
	// says.
	notes, kept := usageRecord(t, e, "workspace/notes"), usageRecord(t, e, "workspace/kept")
	if notes.UseCount != 3 || notes.ViewCount != 0 || kept.UseCount != 1 {
		t.Errorf("after the import with --since: notes %+v, kept %+v", notes, kept)
	}
	if r, err := e.ImportUsage(ctx, claude.New(ws, projects), time.Time{}); err != nil || r.Uses != 0 {
		t.Fatalf("the import after: %+v %v", r, err)
	}
}
