package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/agent/claude"
)

// waitingUsage is usageFile whose writes each first run the next of
// meanwhile: what other processes do while the writer waits for the
// usage file's lock. It writes whatever its context says, as the usage
// file's lock is taken at once when it is free: a hook whose wait for the
// journal ran its time out (cmd/skillsync's hookTimeout) still records.
type waitingUsage struct {
	*usageFile
	meanwhile []func()
}

func (u *waitingUsage) Record(ctx context.Context, uses []agent.Use, name, id string) ([]string, error) {
	if len(u.meanwhile) > 0 {
		next := u.meanwhile[0]
		u.meanwhile = u.meanwhile[1:]
		next()
	}
	return u.usageFile.Record(context.WithoutCancel(ctx), uses, name, id)
}

// lockedOutHook is the hook of Claude Code reporting the Skill call id of
// pdf while another process holds the journal: its wait for the lock ends
// as its time runs out, and it records the use all the same.
func lockedOutHook(t *testing.T, j agent.Journal, rec agent.Recorder, id string) func() {
	return func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		var warned error
		_, dup, err := j.RecordHook(ctx, rec, claude.Name, agent.Event{Skill: "pdf", ID: id}, func(err error) { warned = err })
		if err != nil || dup {
			t.Fatalf("the hook of %s locked out: dup %v, %v", id, dup, err)
		}
		if warned != nil {
			t.Logf("the hook of %s warned: %v", id, warned)
		}
	}
}

// TestAHookLockedOutOfTheJournalCountsOnce: a hook that cannot take the
// journal's lock in time records its use all the same, numbered from the
// journal it read unlocked, as the hook or import holding the lock, or
// another hook locked out beside it, may have numbered theirs. The last
// to write the usage file names its call over the others', and a call
// named nowhere else was counted again by the next import, with no gap in
// the numbers to stop it. Each call counts once, and no import refuses.
func TestAHookLockedOutOfTheJournalCountsOnce(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		// run makes the calls toolu_1 to toolu_3 with their hooks,
		// toolu_0's hooked before.
		run func(t *testing.T, j agent.Journal, rec *waitingUsage, ws, projects string)
	}{
		{"beside a hook holding the journal", func(t *testing.T, j agent.Journal, rec *waitingUsage, _, _ string) {
			// toolu_1's hook holds the journal as it waits for the usage
			// file, which toolu_2's, locked out, writes first.
			rec.meanwhile = []func(){lockedOutHook(t, j, rec, "toolu_2")}
			hook(t, j, rec, "toolu_1")
			hook(t, j, rec, "toolu_3")
		}},
		{"two beside a hook holding the journal", func(t *testing.T, j agent.Journal, rec *waitingUsage, _, _ string) {
			// toolu_2's and toolu_3's both read the journal and the
			// usage file before either writes the usage file.
			rec.meanwhile = []func(){lockedOutHook(t, j, rec, "toolu_2"), lockedOutHook(t, j, rec, "toolu_3")}
			hook(t, j, rec, "toolu_1")
		}},
		{"two beside an import holding the journal", func(t *testing.T, j agent.Journal, rec *waitingUsage, ws, projects string) {
			// The import counts toolu_9, made by hand, and rewrites
			// the journal after the two wrote theirs (Take).
			rec.meanwhile = []func(){lockedOutHook(t, j, rec, "toolu_1"), lockedOutHook(t, j, rec, "toolu_2")}
			claudeTranscript(t, ws, projects, "pdf", "toolu_0", "toolu_9")
			if r, err := importClaude(j, rec, ws, projects, time.Time{}); err != nil || r.Uses != 1 || r.Hooked != 1 {
				t.Fatalf("the import holding the journal: %+v, %v", r, err)
			}
			hook(t, j, rec, "toolu_3")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ws, projects, store, j, file := usageWorkspace(t)
			rec := &waitingUsage{usageFile: file}
			hook(t, j, rec, "toolu_0")
			c.run(t, j, rec, ws, projects)
			calls := []string{"toolu_0", "toolu_1", "toolu_2", "toolu_3"}
			if c.name == "two beside an import holding the journal" {
				calls = append(calls, "toolu_9")
			}
			wantCount(t, store, len(calls), "after the hooks")
			claudeTranscript(t, ws, projects, "pdf", calls...)
			for i := range 2 {
				r, err := importClaude(j, rec, ws, projects, time.Time{})
				if err != nil || r.Uses != 0 {
					t.Fatalf("import %d after: %+v, %v; want no call counted again", i+1, r, err)
				}
			}
			wantCount(t, store, len(calls), "after the imports")
		})
	}
}
