package agent_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/agent/claude"
	"github.com/skillsync/skillsync/agent/codex"
)

// TestAnImportOfAnAgentWithoutHooksAfterTheJournalLostCalls: only
// Claude Code has a hook; Codex's calls (OpenCode's alike) are never
// journaled. A hooks' journal that lost Claude Code's calls (removed, or
// brought back from an older backup) neither stops the import of Codex's
// records, which counts each of their calls once, nor is hidden by it:
// the import of Claude Code's still refuses, naming the journal and
// --since. Refused, Codex's import was to be run with --since, its calls
// before then lost, and with it the journal was made to agree with the
// usage file (a lost journal), or its floor raised over the gap as it
// took out the calls older than HookedKeep (one from a backup), and
// Claude Code's import counted its hooked calls again.
func TestAnImportOfAnAgentWithoutHooksAfterTheJournalLostCalls(t *testing.T) {
	t.Parallel()
	old := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC) // past HookedKeep at the journal's clock
	for _, c := range []struct {
		name string
		// lose makes the hooks' calls toolu_1 to toolu_5, pdf counted
		// once for each, and makes the journal lose some.
		lose func(t *testing.T, j agent.Journal, rec agent.Recorder)
	}{
		{"removed", func(t *testing.T, j agent.Journal, rec agent.Recorder) {
			hook(t, j, rec, "toolu_1", "toolu_2", "toolu_3", "toolu_4", "toolu_5")
			if err := os.Remove(j.Hooked.Path); err != nil {
				t.Fatal(err)
			}
		}},
		{"from an older backup, its calls old", func(t *testing.T, j agent.Journal, rec agent.Recorder) {
			for _, id := range []string{"toolu_1", "toolu_2"} {
				if _, dup, err := j.RecordHook(context.Background(), rec, claude.Name, agent.Event{Skill: "pdf", ID: id, At: old}, nil); err != nil || dup {
					t.Fatalf("the hook of %s: dup %v, %v", id, dup, err)
				}
			}
			backup := readFile(t, j.Hooked.Path)
			hook(t, j, rec, "toolu_3", "toolu_4")
			writeFile(t, j.Hooked.Path, backup)
			hook(t, j, rec, "toolu_5") // numbered past the calls the backup lacks
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			ws, projects, store, j, rec := usageWorkspace(t)
			j.Hooked.Keep = agent.HookedKeep // as the workspace's engine keeps calls
			c.lose(t, j, rec)
			claudeTranscript(t, ws, projects, "pdf", "toolu_1", "toolu_2", "toolu_3", "toolu_4", "toolu_5")
			rollout := newCodexRollout(t, ws)
			rollout.plain(t, rollout.lines("c1", "c2"))
			r, err := j.Import(ctx, pathUsage{rec}, codex.New(ws, rollout.sessions), time.Time{})
			if err != nil || r.Views+r.Uses != 2 {
				t.Fatalf("the import of Codex's records: %+v, %v; want its 2 calls counted", r, err)
			}
			wantCount(t, store, 7, "after the import of Codex's records")
			// Run again with --since, as a refusal of it would have had
			// the user do: nothing counts again.
			since := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
			if r, err := j.Import(ctx, pathUsage{rec}, codex.New(ws, rollout.sessions), since); err != nil || r.Views+r.Uses != 0 {
				t.Fatalf("the import of Codex's records with since: %+v, %v", r, err)
			}
			r, err = importClaude(j, rec, ws, projects, time.Time{})
			wantRefusal(t, r, err, j.Hooked.Path)
			wantCount(t, store, 7, "after the import of Claude Code's")
		})
	}
}
