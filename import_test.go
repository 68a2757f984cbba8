package skillsync

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/skillsync/skillsync/agent/claude"
	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// claudeLine is a transcript line with one tool call, whose id is made of
// its time and tool: calls at different times are different calls.
func claudeLine(at time.Time, cwd, tool, input string) string {
	return fmt.Sprintf(`{"type":"assistant","timestamp":%q,"cwd":%q,"message":{"content":[{"type":"tool_use","id":"toolu_%d_%s","name":%q,"input":%s}]}}`,
		at.Format(time.RFC3339), cwd, at.Unix(), tool, tool, input)
}

// TestImportUsageConcurrently: imports running at once count every event
// exactly once.
func TestImportUsageConcurrently(t *testing.T) {
	t.Parallel()
	e, c, ws := curateWorkspace(t)
	projects := t.TempDir()
	var lines []string
	for i := 0; i < 500; i++ {
		lines = append(lines, claudeLine(c.t.Add(time.Duration(i)*time.Second), ws, "Skill", `{"skill":"notes"}`))
	}
	skilltest.AppendLines(t, filepath.Join(projects, claude.FolderName(ws), "s.jsonl"), lines...)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := e.ImportUsage(context.Background(), claude.New(ws, projects), time.Time{}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	u, _ := e.Usage().Load()
	notes, _ := curator.ParseCopy("workspace/notes")
	r := u.Skills[notes]
	if r == nil || r.UseCount != 500 {
		t.Fatalf("use_count = %+v, want 500", r)
	}
}

// TestImportUsageReactivatesAndViewsLocalSkills: a read of a local skill's
// own SKILL.md is a view; an imported use newer than a staleness makes
// the skill active again, an older one does not.
func TestImportUsageReactivatesAndViewsLocalSkills(t *testing.T) {
	t.Parallel()
	e, c, ws := curateWorkspace(t)
	projects := t.TempDir()
	transcript := filepath.Join(projects, claude.FolderName(ws), "s.jsonl")
	c.t = c.t.Add(40 * 24 * time.Hour)
	if _, err := e.Curate(context.Background(), CurateOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if state(t, e, "workspace/notes") != curator.Stale || state(t, e, "workspace/kept") != curator.Stale {
		t.Fatal("the skills did not become stale")
	}
	staleAt := c.t
	skilltest.AppendLines(t, transcript,
		claudeLine(staleAt.Add(-time.Hour), ws, "Skill", `{"skill":"kept"}`),
		claudeLine(staleAt.Add(time.Hour), ws, "Read", fmt.Sprintf(`{"file_path":%q}`, filepath.Join(ws, "skills", "notes", "SKILL.md"))))
	r, err := e.ImportUsage(context.Background(), claude.New(ws, projects), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Uses != 1 || r.Views != 1 || len(r.Reactivated) != 1 || r.Reactivated[0] != "notes" {
		t.Errorf("report = %+v", r)
	}
	if state(t, e, "workspace/notes") != curator.Active || state(t, e, "workspace/kept") != curator.Stale {
		t.Errorf("notes %s (want active), kept %s (want stale)", state(t, e, "workspace/notes"), state(t, e, "workspace/kept"))
	}
}
