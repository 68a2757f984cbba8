package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/agent/claude"
)

// TestConcurrentHooksNumberEachCallOnce: two agent sessions' hooks
// firing at once: every call is journaled under its own number, none
// skipped, and the import after counts none of them again.
func TestConcurrentHooksNumberEachCallOnce(t *testing.T) {
	t.Parallel()
	ws, projects, store, j, rec := usageWorkspace(t)
	const n = 40
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("toolu_%02d", i)
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, dup, err := j.RecordHook(context.Background(), rec, claude.Name, agent.Event{Skill: "pdf", ID: id}, func(err error) { t.Error(err) }); err != nil || dup {
				t.Errorf("the hook of %s: dup %v, %v", id, dup, err)
			}
		}()
	}
	wg.Wait()
	var seqs []int
	journals := map[string]bool{}
	for _, line := range bytes.Split(bytes.TrimSpace(readFile(t, j.Hooked.Path)), []byte("\n")) {
		var e struct {
			Journal string `json:"journal"`
			Seq     int    `json:"seq"`
		}
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatal(err)
		}
		journals[e.Journal] = true
		seqs = append(seqs, e.Seq)
	}
	sort.Ints(seqs)
	for i, s := range seqs {
		if s != i+1 {
			t.Fatalf("the journal's numbers %v (journals %v), want 1 to %d", seqs, journals, n)
		}
	}
	if len(seqs) != n || len(journals) != 1 {
		t.Fatalf("%d calls journaled in %d journals, want %d in one", len(seqs), len(journals), n)
	}
	claudeTranscript(t, ws, projects, "pdf", ids...)
	r, err := importClaude(j, rec, ws, projects, time.Time{})
	if err != nil || r.Uses != 0 || r.Hooked != n {
		t.Fatalf("the import: %+v, %v; want the %d calls hooked", r, err, n)
	}
	wantCount(t, store, n, "after the import")
}

// oldTake rewrites the journal as the import of the skillsync before
// numbered calls did: each entry it keeps re-encoded with its agent, id
// and time alone, lines of other shapes (the floor) dropped.
func oldTake(t *testing.T, path string, claimed ...string) {
	t.Helper()
	var kept bytes.Buffer
	for _, line := range bytes.Split(readFile(t, path), []byte("\n")) {
		var e struct {
			Agent string    `json:"agent"`
			ID    string    `json:"id"`
			At    time.Time `json:"at"`
		}
		if json.Unmarshal(line, &e) != nil || e.ID == "" || e.Agent == "" {
			continue
		}
		drop := false
		for _, id := range claimed {
			drop = drop || id == e.ID
		}
		if !drop {
			out, _ := json.Marshal(e)
			kept.Write(append(out, '\n'))
		}
	}
	writeFile(t, path, kept.Bytes())
}

// TestAnOlderSkillsyncsImportBetweenHooks: an import by the skillsync
// before numbered calls (a daemon not yet upgraded) rewrites the journal
// without the numbers; the next import of this skillsync refuses, and
// its error names that cause too, not only a backup.
func TestAnOlderSkillsyncsImportBetweenHooks(t *testing.T) {
	t.Parallel()
	ws, projects, store, j, rec := usageWorkspace(t)
	hook(t, j, rec, "toolu_1", "toolu_2")
	oldTake(t, j.Hooked.Path, "toolu_1")
	hook(t, j, rec, "toolu_3")
	claudeTranscript(t, ws, projects, "pdf", "toolu_1", "toolu_2", "toolu_3")
	r, err := importClaude(j, rec, ws, projects, time.Time{})
	wantRefusal(t, r, err, j.Hooked.Path)
	if err != nil && !strings.Contains(err.Error(), "older skillsync") {
		t.Errorf("the refusal does not name an older skillsync's import as a cause: %v", err)
	}
	wantCount(t, store, 3, "after the refusal")
	// The --since the refusal names re-aligns the journal: nothing is
	// counted again, and the imports after need none.
	if _, err := importClaude(j, rec, ws, projects, time.Date(2026, 3, 1, 10, 0, 0, 1e6, time.UTC)); err != nil {
		t.Fatalf("the import with since: %v", err)
	}
	hook(t, j, rec, "toolu_4")
	claudeTranscript(t, ws, projects, "pdf", "toolu_1", "toolu_2", "toolu_3", "toolu_4")
	if r, err := importClaude(j, rec, ws, projects, time.Time{}); err != nil || r.Uses != 0 {
		t.Fatalf("the import after: %+v, %v", r, err)
	}
	wantCount(t, store, 4, "after the import after")
}

// TestAJournalFromABackupAfterAnImportSaysFromWhen: the journal brought
// back from a backup older than the hooks' last calls, with an import
// since that read the agent's records past them: the records this import
// reads hold no call to tell the time from, and the refusal names the
// time the usage file gives the last hook's call (just after it), not a
// placeholder. With that since nothing is counted again, and later calls
// count once.
func TestAJournalFromABackupAfterAnImportSaysFromWhen(t *testing.T) {
	t.Parallel()
	ws, projects, store, j, rec := usageWorkspace(t)
	hook(t, j, rec, "toolu_1")
	backup := readFile(t, j.Hooked.Path)
	hook(t, j, rec, "toolu_2", "toolu_3")
	claudeTranscript(t, ws, projects, "pdf", "toolu_1", "toolu_2", "toolu_3")
	if r, err := importClaude(j, rec, ws, projects, time.Time{}); err != nil || r.Hooked != 3 {
		t.Fatalf("the import: %+v, %v", r, err)
	}
	writeFile(t, j.Hooked.Path, backup)
	r, err := importClaude(j, rec, ws, projects, time.Time{})
	wantRefusal(t, r, err, j.Hooked.Path)
	// The hooks recorded at the journal's clock, 2026-04-01T00:00:00Z.
	const since = "2026-04-01T00:00:00.001Z"
	if err != nil && !strings.Contains(err.Error(), "--since "+since) {
		t.Fatalf("the refusal does not say from when: %v", err)
	}
	wantCount(t, store, 3, "after the refusal")
	at, _ := time.Parse(time.RFC3339Nano, since)
	if _, err := importClaude(j, rec, ws, projects, at); err != nil {
		t.Fatalf("the import with since: %v", err)
	}
	wantCount(t, store, 3, "after the import with since")
	hook(t, j, rec, "toolu_4")
	claudeTranscript(t, ws, projects, "pdf", "toolu_1", "toolu_2", "toolu_3", "toolu_4")
	if r, err := importClaude(j, rec, ws, projects, time.Time{}); err != nil || r.Uses != 0 || r.Hooked != 1 {
		t.Fatalf("the import after: %+v, %v", r, err)
	}
	wantCount(t, store, 4, "after the import after")
}
