package agent_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/agent/claude"
	"github.com/skillsync/skillsync/curator"
)

// hook records the Skill calls of pdf with the ids given as Claude Code's
// hook reports them.
func hook(t *testing.T, j agent.Journal, rec agent.Recorder, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if _, dup, err := j.RecordHook(context.Background(), rec, claude.Name, agent.Event{Skill: "pdf", ID: id}, func(err error) { t.Log(err) }); err != nil || dup {
			t.Fatalf("the hook of %s: dup %v, %v", id, dup, err)
		}
	}
}

// importClaude imports the workspace's Claude Code transcripts.
func importClaude(j agent.Journal, rec agent.Recorder, ws, projects string, since time.Time) (*agent.Report, error) {
	return j.Import(context.Background(), rec, claude.New(ws, projects), since)
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// wantRefusal checks that err refuses an import, naming the journal and
// the fix.
func wantRefusal(t *testing.T, r *agent.Report, err error, journal string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), journal) || !strings.Contains(err.Error(), "--since") {
		t.Fatalf("the import: %+v, %v; want a refusal naming %s and --since", r, err, journal)
	}
}

// wantCount checks how many times pdf was counted.
func wantCount(t *testing.T, store *curator.Store, want int, when string) {
	t.Helper()
	if n := useCount(t, store, "pdf"); n != want {
		t.Errorf("%s: pdf counted %d times, want %d", when, n, want)
	}
}

// TestAHookJournalFromAnOlderBackupCountsNothingAgain: the hooks'
// journal brought back alone from a backup taken before the hooks'
// latest calls, the usage file current: the import refuses, naming the
// journal and --since with the time of the last hooked call, rather than
// count the calls the backup lacks a second time; with since it goes on,
// and the imports after it need none and count each later call once.
func TestAHookJournalFromAnOlderBackupCountsNothingAgain(t *testing.T) {
	t.Parallel()
	ws, projects, store, j, rec := usageWorkspace(t)
	hook(t, j, rec, "toolu_1")
	backup := readFile(t, j.Hooked.Path)
	hook(t, j, rec, "toolu_2", "toolu_3")
	writeFile(t, j.Hooked.Path, backup)
	claudeTranscript(t, ws, projects, "pdf", "toolu_1", "toolu_2", "toolu_3")
	r, err := importClaude(j, rec, ws, projects, time.Time{})
	wantRefusal(t, r, err, j.Hooked.Path)
	if err != nil && !strings.Contains(err.Error(), "--since 2026-03-01T10:00:00.001Z") {
		t.Errorf("the refusal does not say from when: %v", err)
	}
	wantCount(t, store, 3, "after the refusal")
	if _, err := importClaude(j, rec, ws, projects, time.Date(2026, 3, 1, 10, 0, 0, 1e6, time.UTC)); err != nil {
		t.Fatalf("the import with since: %v", err)
	}
	wantCount(t, store, 3, "after the import with since")
	// Later calls, hooked and not, count once each, without since.
	hook(t, j, rec, "toolu_4")
	claudeTranscript(t, ws, projects, "pdf", "toolu_1", "toolu_2", "toolu_3", "toolu_4", "toolu_5")
	r, err = importClaude(j, rec, ws, projects, time.Time{})
	if err != nil || r.Uses != 1 || r.Hooked != 1 {
		t.Fatalf("the import after: %+v, %v; want toolu_5 counted and toolu_4 hooked", r, err)
	}
	wantCount(t, store, 5, "after the import after")
}

// TestAHookJournalMissingOnlyTheLastCallIsNoRestore: a journal lacking
// only the last hooked call, as a hook stopped before journaling it or
// killed mid-line leaves it, is no journal from a backup: the usage file
// names that call, and the import goes on, counting nothing twice.
func TestAHookJournalMissingOnlyTheLastCallIsNoRestore(t *testing.T) {
	t.Parallel()
	ws, projects, store, j, rec := usageWorkspace(t)
	hook(t, j, rec, "toolu_1", "toolu_2", "toolu_3")
	data := readFile(t, j.Hooked.Path)
	lines := strings.SplitAfter(string(data), "\n")
	// The last line cut mid-way, as a crash during its write leaves it.
	cut := strings.Join(lines[:2], "") + lines[2][:len(lines[2])/2]
	writeFile(t, j.Hooked.Path, []byte(cut))
	claudeTranscript(t, ws, projects, "pdf", "toolu_1", "toolu_2", "toolu_3")
	r, err := importClaude(j, rec, ws, projects, time.Time{})
	if err != nil || r.Uses != 0 || r.Hooked != 3 {
		t.Fatalf("the import: %+v, %v; want the 3 calls hooked", r, err)
	}
	wantCount(t, store, 3, "after the import")
	// A hook after the cut journals its call on a line of its own.
	writeFile(t, j.Hooked.Path, []byte(cut))
	hook(t, j, rec, "toolu_4")
	claudeTranscript(t, ws, projects, "pdf", "toolu_1", "toolu_2", "toolu_3", "toolu_4")
	if r, err := importClaude(j, rec, ws, projects, time.Time{}); err != nil || r.Uses != 0 || r.Hooked != 1 {
		t.Fatalf("the import after a hook past the cut: %+v, %v", r, err)
	}
	wantCount(t, store, 4, "after the import past the cut")
}

// TestAHookJournalOfAnotherMachineCountsNothingAgain: the journal
// replaced by another machine's (a copied skills folder): its calls are
// not this workspace's, and the calls this workspace's hooks counted are
// not in it: the import refuses.
func TestAHookJournalOfAnotherMachineCountsNothingAgain(t *testing.T) {
	t.Parallel()
	ws, projects, store, j, rec := usageWorkspace(t)
	_, _, _, otherJ, otherRec := usageWorkspace(t)
	hook(t, otherJ, otherRec, "toolu_a", "toolu_b", "toolu_c", "toolu_d")
	hook(t, j, rec, "toolu_1", "toolu_2")
	writeFile(t, j.Hooked.Path, readFile(t, otherJ.Hooked.Path))
	claudeTranscript(t, ws, projects, "pdf", "toolu_1", "toolu_2")
	r, err := importClaude(j, rec, ws, projects, time.Time{})
	wantRefusal(t, r, err, j.Hooked.Path)
	wantCount(t, store, 2, "after the refusal")
}

// TestAHookJournalRemovedThenBegunByAHookCountsNothingAgain: the journal
// removed, then a hook's call before the next import begins it again:
// the journal is there, but it lacks the calls hooks counted before the
// removal, and the import refuses.
func TestAHookJournalRemovedThenBegunByAHookCountsNothingAgain(t *testing.T) {
	t.Parallel()
	ws, projects, store, j, rec := usageWorkspace(t)
	hook(t, j, rec, "toolu_1", "toolu_2")
	if err := os.Remove(j.Hooked.Path); err != nil {
		t.Fatal(err)
	}
	hook(t, j, rec, "toolu_3")
	claudeTranscript(t, ws, projects, "pdf", "toolu_1", "toolu_2", "toolu_3")
	r, err := importClaude(j, rec, ws, projects, time.Time{})
	wantRefusal(t, r, err, j.Hooked.Path)
	wantCount(t, store, 3, "after the refusal")
}

// TestAUsageFileFromAnOlderBackupWithItsJournal: the usage file brought
// back alone from a backup, the journal newer: the usage file lost what
// it counted since (as TestAnImportStateFromABackupCountsNothingAgain),
// and the import goes on: it refuses nothing, and counts none of the
// calls the journal says hooks counted. The hooks after it number their
// calls past the journal's, so no later restore goes unseen.
func TestAUsageFileFromAnOlderBackupWithItsJournal(t *testing.T) {
	t.Parallel()
	ws, projects, store, j, rec := usageWorkspace(t)
	usage := j.Hooked.Path[:len(j.Hooked.Path)-len(".hooked.jsonl")] + ".usage.json"
	hook(t, j, rec, "toolu_1")
	older := readFile(t, usage)
	hook(t, j, rec, "toolu_2", "toolu_3")
	writeFile(t, usage, older)
	claudeTranscript(t, ws, projects, "pdf", "toolu_1", "toolu_2", "toolu_3")
	r, err := importClaude(j, rec, ws, projects, time.Time{})
	if err != nil || r.Uses != 0 || r.Hooked != 3 {
		t.Fatalf("the import: %+v, %v; want the 3 calls hooked", r, err)
	}
	wantCount(t, store, 1, "after the import") // the backup's one
	hook(t, j, rec, "toolu_4", "toolu_5")
	journalBackup := readFile(t, j.Hooked.Path)
	hook(t, j, rec, "toolu_6", "toolu_7")
	writeFile(t, j.Hooked.Path, journalBackup)
	claudeTranscript(t, ws, projects, "pdf", "toolu_1", "toolu_2", "toolu_3", "toolu_4", "toolu_5", "toolu_6", "toolu_7")
	r, err = importClaude(j, rec, ws, projects, time.Time{})
	wantRefusal(t, r, err, j.Hooked.Path)
	wantCount(t, store, 5, "after the journal came back")
}

// TestAnImportStateFromABackupWithHooks: the imported file brought back
// alone while hooks count: the marks are older than the usage file's
// last import, and the calls between, hooked or imported, would count
// again; the import refuses, naming the file.
func TestAnImportStateFromABackupWithHooks(t *testing.T) {
	t.Parallel()
	ws, projects, store, j, rec := usageWorkspace(t)
	claudeTranscript(t, ws, projects, "pdf", "toolu_1")
	if _, err := importClaude(j, rec, ws, projects, time.Time{}); err != nil {
		t.Fatal(err)
	}
	backup := readFile(t, j.StatePath)
	hook(t, j, rec, "toolu_2")
	claudeTranscript(t, ws, projects, "pdf", "toolu_1", "toolu_2", "toolu_3")
	if r, err := importClaude(j, rec, ws, projects, time.Time{}); err != nil || r.Uses != 1 || r.Hooked != 1 {
		t.Fatalf("the import: %+v, %v", r, err)
	}
	writeFile(t, j.StatePath, backup)
	r, err := importClaude(j, rec, ws, projects, time.Time{})
	wantRefusal(t, r, err, j.StatePath)
	wantCount(t, store, 3, "after the refusal")
}

// TestAFullHookJournalCountsNothingAgain: a journal past the size it may
// hold takes no more calls; the hooks still count theirs, and the import
// refuses rather than count them a second time from the transcript.
func TestAFullHookJournalCountsNothingAgain(t *testing.T) {
	t.Parallel()
	ws, projects, store, j, rec := usageWorkspace(t)
	hook(t, j, rec, "toolu_1")
	f, err := os.OpenFile(j.Hooked.Path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Another agent's calls, unclaimed, past 4 MiB.
	line := `{"agent":"other","id":"call_0000000000000000000000000000","at":"2026-03-31T00:00:00Z"}` + "\n"
	if _, err := f.WriteString(strings.Repeat(line, (4<<20)/len(line)+1)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	hook(t, j, rec, "toolu_2", "toolu_3")
	claudeTranscript(t, ws, projects, "pdf", "toolu_1", "toolu_2", "toolu_3")
	r, err := importClaude(j, rec, ws, projects, time.Time{})
	wantRefusal(t, r, err, j.Hooked.Path)
	wantCount(t, store, 3, "after the refusal")
}
