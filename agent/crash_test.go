package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/agent/claude"
	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/layering"
)

// usageFile records into a workspace's real usage file; every skill an
// event names is a workspace skill. stop, when set, is what happens to
// the import at Record: "before" fails it before anything is written,
// "after" fails it once the uses are written, as a process killed at
// either moment would leave them.
type usageFile struct {
	store *curator.Store
	stop  string
}

var errKilled = errors.New("killed")

func (u *usageFile) Resolve(_ string, ev agent.Event) (string, bool) { return ev.Skill, ev.Skill != "" }

func (u *usageFile) LastImport(name string) (string, error) { return u.store.LastImport(name) }

func (u *usageFile) Record(ctx context.Context, uses []agent.Use, name, id string) ([]string, error) {
	if u.stop == "before" {
		return nil, errKilled
	}
	out := make([]curator.Use, len(uses))
	for i, use := range uses {
		out[i] = curator.Use{Copy: curator.Copy{Layer: layering.Workspace, Name: use.Skill}, View: use.View,
			From: curator.Source(use.From), At: use.At}
	}
	if _, err := u.store.RecordImport(ctx, out, name, id); err != nil {
		return nil, err
	}
	if u.stop == "after" {
		return nil, errKilled
	}
	return nil, nil
}

// claudeTranscript writes Skill calls of skill with the ids given
// (toolu_1 alone by default) in a session of ws as Claude Code keeps it
// under projects.
func claudeTranscript(t *testing.T, ws, projects, skill string, ids ...string) {
	t.Helper()
	dir := filepath.Join(projects, claude.FolderName(ws))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if len(ids) == 0 {
		ids = []string{"toolu_1"}
	}
	var lines []byte
	for _, id := range ids {
		call := map[string]any{"type": "assistant", "timestamp": "2026-03-01T10:00:00.000Z", "cwd": ws, "sessionId": "S",
			"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": id, "name": "Skill",
				"input": map[string]string{"skill": skill}}}}}
		line, _ := json.Marshal(call)
		lines = append(append(lines, line...), '\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "s.jsonl"), lines, 0o644); err != nil {
		t.Fatal(err)
	}
}

func journal(skills string) agent.Journal {
	return agent.Journal{StatePath: filepath.Join(skills, ".imported.json"), Hooked: agent.Hooked{Path: filepath.Join(skills, ".hooked.jsonl")},
		Now: func() time.Time { return time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC) }}
}

func useCount(t *testing.T, store *curator.Store, skill string) int {
	t.Helper()
	u, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if r := u.Skills[curator.Copy{Layer: layering.Workspace, Name: skill}]; r != nil {
		return r.UseCount
	}
	return 0
}

// TestAHookStoppedBeforeItsJournalCountsOnce: a hook that recorded a
// call and stopped before journaling it (its journal line gone) leaves
// the call named in the usage file, so neither the hook sent it again
// nor an import of the transcript counts it a second time.
func TestAHookStoppedBeforeItsJournalCountsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws, projects, store, j, rec := usageWorkspace(t)
	warn := func(err error) { t.Log(err) }
	if _, dup, err := j.RecordHook(ctx, rec, claude.Name, agent.Event{Skill: "pdf", ID: "toolu_1"}, warn); err != nil || dup {
		t.Fatalf("the hook: %v %v", dup, err)
	}
	if err := os.Truncate(j.Hooked.Path, 0); err != nil { // as if killed before the line was written
		t.Fatal(err)
	}
	if _, dup, err := j.RecordHook(ctx, rec, claude.Name, agent.Event{Skill: "pdf", ID: "toolu_1"}, warn); err != nil || !dup {
		t.Fatalf("the hook sent the call again: dup %v, %v", dup, err)
	}
	// The next call's hook names its own call in the usage file; the
	// first must not be forgotten.
	if _, dup, err := j.RecordHook(ctx, rec, claude.Name, agent.Event{Skill: "pdf", ID: "toolu_2"}, warn); err != nil || dup {
		t.Fatalf("the next call's hook: dup %v, %v", dup, err)
	}
	claudeTranscript(t, ws, projects, "pdf", "toolu_1", "toolu_2")
	r, err := j.Import(ctx, rec, claude.New(ws, projects), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Uses != 0 || r.Hooked != 2 || useCount(t, store, "pdf") != 2 {
		t.Errorf("the import: %+v, pdf counted %d times, want twice", r, useCount(t, store, "pdf"))
	}
}

// usageWorkspace makes a workspace with its skills folder: it, a folder
// for Claude Code's projects, the workspace's usage store and journal,
// and a recorder that writes to the store.
func usageWorkspace(t *testing.T) (ws, projects string, store *curator.Store, j agent.Journal, rec *usageFile) {
	t.Helper()
	ws, projects = t.TempDir(), t.TempDir()
	skills := filepath.Join(ws, "skills")
	if err := os.MkdirAll(skills, 0o755); err != nil {
		t.Fatal(err)
	}
	store = curator.NewStore(skills)
	return ws, projects, store, journal(skills), &usageFile{store: store}
}

// stoppedImport makes a workspace whose transcript holds one call of pdf
// and runs an import of it stopped at stop (usageFile); it returns what
// the imports after need, their recorder no longer stopping.
func stoppedImport(t *testing.T, stop string) (ws, projects string, store *curator.Store, j agent.Journal, rec *usageFile) {
	t.Helper()
	ws, projects = t.TempDir(), t.TempDir()
	skills := filepath.Join(ws, "skills")
	claudeTranscript(t, ws, projects, "pdf")
	store, j = curator.NewStore(skills), journal(skills)
	rec = &usageFile{store: store, stop: stop}
	if _, err := j.Import(context.Background(), rec, claude.New(ws, projects), time.Time{}); !errors.Is(err, errKilled) {
		t.Fatalf("the import stopped %s: %v", stop, err)
	}
	rec.stop = ""
	return ws, projects, store, j, rec
}

// TestAnImportStoppedAnywhereCountsOnce: an import stopped before it
// records its uses, or after it recorded them but before it saved how far
// it read, leaves the next import to count each call exactly once.
func TestAnImportStoppedAnywhereCountsOnce(t *testing.T) {
	t.Parallel()
	for _, stop := range []string{"before", "after"} {
		t.Run(stop, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			ws, projects, store, j, rec := stoppedImport(t, stop)
			for i := 0; i < 2; i++ {
				if _, err := j.Import(ctx, rec, claude.New(ws, projects), time.Time{}); err != nil {
					t.Fatalf("import %d after: %v", i+1, err)
				}
			}
			if n := useCount(t, store, "pdf"); n != 1 {
				t.Errorf("pdf counted %d times, want once", n)
			}
		})
	}
}

// TestAPendingImportOverACorruptUsageFile: an import stopped before it
// recorded its uses, then the usage file found corrupt, blocks nothing:
// a corrupt file holds no import, so the next import reads the calls
// again and counts them into the fresh file the write starts.
func TestAPendingImportOverACorruptUsageFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws, projects, store, j, rec := stoppedImport(t, "before")
	if err := os.WriteFile(filepath.Join(ws, "skills", ".usage.json"), []byte(`{"version":2,"skills":{"workspace/pdf":{"use_count":-1}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Import(ctx, rec, claude.New(ws, projects), time.Time{}); err != nil {
		t.Fatalf("the import after: %v", err)
	}
	if n := useCount(t, store, "pdf"); n != 1 {
		t.Errorf("pdf counted %d times, want once", n)
	}
}

// TestALostImportStateCountsNothingAgain: the import state gone (deleted,
// or a backup that restored the usage file alone) while the usage file
// says an import of the agent counted its calls: the next import refuses,
// saying to pass --since, rather than count every call on disk again;
// with since it goes on from there.
func TestALostImportStateCountsNothingAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws, projects, store, j, rec := usageWorkspace(t)
	claudeTranscript(t, ws, projects, "pdf")
	if _, err := j.Import(ctx, rec, claude.New(ws, projects), time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(j.StatePath); err != nil {
		t.Fatal(err)
	}
	r, err := j.Import(ctx, rec, claude.New(ws, projects), time.Time{})
	if err == nil || !strings.Contains(err.Error(), "--since") {
		t.Errorf("the import without its state: %+v, %v; want a refusal naming --since", r, err)
	}
	if n := useCount(t, store, "pdf"); n != 1 {
		t.Errorf("pdf counted %d times, want once", n)
	}
	// --since past the call counted: nothing more.
	if _, err := j.Import(ctx, rec, claude.New(ws, projects), time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatalf("the import with since: %v", err)
	}
	if n := useCount(t, store, "pdf"); n != 1 {
		t.Errorf("after the import with since, pdf counted %d times, want once", n)
	}
}

// TestALostHookJournalCountsNothingAgain: the hooks' journal removed
// while the usage file names a call a hook recorded: the next import
// refuses, saying to pass --since, rather than count the hooked calls
// again from the transcript; with since it goes on, begins the journal
// again, and the import after it needs no since.
func TestALostHookJournalCountsNothingAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws, projects, store, j, rec := usageWorkspace(t)
	warn := func(err error) { t.Log(err) }
	for _, id := range []string{"toolu_1", "toolu_2"} {
		if _, dup, err := j.RecordHook(ctx, rec, claude.Name, agent.Event{Skill: "pdf", ID: id}, warn); err != nil || dup {
			t.Fatalf("the hook of %s: %v %v", id, dup, err)
		}
	}
	if err := os.Remove(j.Hooked.Path); err != nil {
		t.Fatal(err)
	}
	claudeTranscript(t, ws, projects, "pdf", "toolu_1", "toolu_2")
	r, err := j.Import(ctx, rec, claude.New(ws, projects), time.Time{})
	if err == nil || !strings.Contains(err.Error(), "--since") || !strings.Contains(err.Error(), j.Hooked.Path) {
		t.Errorf("the import without the journal: %+v, %v; want a refusal naming the journal and --since", r, err)
	}
	if n := useCount(t, store, "pdf"); n != 2 {
		t.Errorf("pdf counted %d times, want twice", n)
	}
	if _, err := j.Import(ctx, rec, claude.New(ws, projects), time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatalf("the import with since: %v", err)
	}
	if _, err := j.Import(ctx, rec, claude.New(ws, projects), time.Time{}); err != nil {
		t.Fatalf("the import after it: %v", err)
	}
	if n := useCount(t, store, "pdf"); n != 2 {
		t.Errorf("after the imports, pdf counted %d times, want twice", n)
	}
}

// TestAnImportStateFromABackupCountsNothingAgain: the import state
// brought back alone from a backup holds the marks of an import older
// than the last the usage file holds, and would read the calls counted
// since again: the import refuses, saying to pass --since; with since it
// goes on, and the import after it needs none. A usage file brought back
// alone is older than the marks instead: it lost its counts, and the
// import goes on without counting any call twice.
func TestAnImportStateFromABackupCountsNothingAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws, projects, store, j, rec := usageWorkspace(t)
	imp := func(since time.Time) error {
		t.Helper()
		_, err := j.Import(ctx, rec, claude.New(ws, projects), since)
		return err
	}
	claudeTranscript(t, ws, projects, "pdf", "toolu_1")
	if err := imp(time.Time{}); err != nil {
		t.Fatal(err)
	}
	backup, err := os.ReadFile(j.StatePath)
	if err != nil {
		t.Fatal(err)
	}
	claudeTranscript(t, ws, projects, "pdf", "toolu_1", "toolu_2", "toolu_3")
	if err := imp(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(j.StatePath, backup, 0o644); err != nil {
		t.Fatal(err)
	}
	err = imp(time.Time{})
	if err == nil || !strings.Contains(err.Error(), "--since") || !strings.Contains(err.Error(), j.StatePath) {
		t.Errorf("the import with the state of a backup: %v; want a refusal naming the state and --since", err)
	}
	if n := useCount(t, store, "pdf"); n != 3 {
		t.Fatalf("pdf counted %d times, want 3", n)
	}
	if err := imp(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatalf("the import with since: %v", err)
	}
	if err := imp(time.Time{}); err != nil {
		t.Fatalf("the import after it: %v", err)
	}
	if n := useCount(t, store, "pdf"); n != 3 {
		t.Fatalf("after the import with since, pdf counted %d times, want 3", n)
	}

	// The usage file brought back alone: older than the marks.
	usage := filepath.Join(ws, "skills", ".usage.json")
	older, err := os.ReadFile(usage)
	if err != nil {
		t.Fatal(err)
	}
	claudeTranscript(t, ws, projects, "pdf", "toolu_1", "toolu_2", "toolu_3", "toolu_4")
	if err := imp(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(usage, older, 0o644); err != nil {
		t.Fatal(err)
	}
	claudeTranscript(t, ws, projects, "pdf", "toolu_1", "toolu_2", "toolu_3", "toolu_4", "toolu_5")
	if err := imp(time.Time{}); err != nil {
		t.Fatalf("the import after the usage file came back: %v", err)
	}
	if n := useCount(t, store, "pdf"); n != 4 {
		t.Errorf("pdf counted %d times, want 4 (the 3 of the backup, and toolu_5)", n)
	}
}

// TestAWorkspaceNestedLaterCountsNothingItsOuterOneDid: sessions run in a
// plain folder of a workspace are that workspace's, and its import counts
// them. Once the folder becomes a workspace of its own (configured and
// synced), its imports read the same transcripts: the calls the outer
// workspace counted are not counted again, its own later calls are, and
// the outer workspace no longer reads them.
func TestAWorkspaceNestedLaterCountsNothingItsOuterOneDid(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root, projects := t.TempDir(), t.TempDir()
	sub := filepath.Join(root, "sub")
	for _, d := range []string{filepath.Join(root, ".skills-cache"), filepath.Join(root, "skills"), sub} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	outerStore, outerJournal := curator.NewStore(filepath.Join(root, "skills")), journal(filepath.Join(root, "skills"))
	outerJournal.Root = root
	claudeTranscript(t, sub, projects, "pdf", "toolu_1")
	if r, err := outerJournal.Import(ctx, &usageFile{store: outerStore}, claude.New(root, projects), time.Time{}); err != nil || r.Uses != 1 {
		t.Fatalf("the outer workspace's import: %+v %v", r, err)
	}

	// sub becomes a workspace: configured and synced.
	for _, d := range []string{filepath.Join(sub, ".skills-cache"), filepath.Join(sub, "skills")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	claudeTranscript(t, sub, projects, "pdf", "toolu_1", "toolu_2")
	store, j := curator.NewStore(filepath.Join(sub, "skills")), journal(filepath.Join(sub, "skills"))
	j.Root = sub
	r, err := j.Import(ctx, &usageFile{store: store}, claude.New(sub, projects), time.Time{})
	if err != nil || r.Uses != 1 || r.Duplicates != 1 {
		t.Fatalf("the nested workspace's import: %+v %v; want toolu_2 alone", r, err)
	}
	if r, err := outerJournal.Import(ctx, &usageFile{store: outerStore}, claude.New(root, projects), time.Time{}); err != nil || r.Uses != 0 {
		t.Fatalf("the outer workspace's import after: %+v %v", r, err)
	}
	if outer, nested := useCount(t, outerStore, "pdf"), useCount(t, store, "pdf"); outer != 1 || nested != 1 {
		t.Errorf("pdf counted %d times by the outer workspace and %d by the nested one, want once each", outer, nested)
	}
}

// TestAFirstHookStoppedBeforeItsJournalIsNoLostJournal: the first call a
// hook ever records, stopped once the usage file names it and before the
// journal was begun, is a call the next import finds named there (as
// TestAHookStoppedBeforeItsJournalCountsOnce), not a journal someone
// removed: the import goes on, without --since, and counts it once.
func TestAFirstHookStoppedBeforeItsJournalIsNoLostJournal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws, projects, store, j, rec := usageWorkspace(t)
	rec.stop = "after" // the use written, then the hook killed
	if _, _, err := j.RecordHook(ctx, rec, claude.Name, agent.Event{Skill: "pdf", ID: "toolu_1"}, func(err error) { t.Log(err) }); !errors.Is(err, errKilled) {
		t.Fatalf("the hook stopped after its use: %v", err)
	}
	rec.stop = ""
	claudeTranscript(t, ws, projects, "pdf", "toolu_1")
	r, err := j.Import(ctx, rec, claude.New(ws, projects), time.Time{})
	if err != nil {
		t.Fatalf("the import after a hook stopped before its first journal line: %v", err)
	}
	if r.Uses != 0 || r.Hooked != 1 || useCount(t, store, "pdf") != 1 {
		t.Errorf("the import: %+v, pdf counted %d times, want once", r, useCount(t, store, "pdf"))
	}
}
