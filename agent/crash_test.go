package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
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

func (u *usageFile) Resolve(ev agent.Event) (string, bool) { return ev.Skill, ev.Skill != "" }

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

// TestAnImportStoppedAnywhereCountsOnce: an import stopped before it
// records its uses, or after it recorded them but before it saved how far
// it read, leaves the next import to count each call exactly once.
func TestAnImportStoppedAnywhereCountsOnce(t *testing.T) {
	t.Parallel()
	for _, stop := range []string{"before", "after"} {
		t.Run(stop, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			ws, projects := t.TempDir(), t.TempDir()
			skills := filepath.Join(ws, "skills")
			dir := filepath.Join(projects, claude.FolderName(ws))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			call := map[string]any{"type": "assistant", "timestamp": "2026-03-01T10:00:00.000Z", "cwd": ws, "sessionId": "S",
				"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "Skill",
					"input": map[string]string{"skill": "pdf"}}}}}
			line, _ := json.Marshal(call)
			if err := os.WriteFile(filepath.Join(dir, "s.jsonl"), append(line, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
			store := curator.NewStore(skills)
			j := agent.Journal{StatePath: filepath.Join(skills, ".imported.json"), Hooked: agent.Hooked{Path: filepath.Join(skills, ".hooked.jsonl")},
				Now: func() time.Time { return time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC) }}
			rec := &usageFile{store: store, stop: stop}
			if _, err := j.Import(ctx, rec, claude.New(ws, projects), time.Time{}); !errors.Is(err, errKilled) {
				t.Fatalf("the stopped import: %v", err)
			}
			rec.stop = ""
			for i := 0; i < 2; i++ {
				if _, err := j.Import(ctx, rec, claude.New(ws, projects), time.Time{}); err != nil {
					t.Fatalf("import %d after: %v", i+1, err)
				}
			}
			u, err := store.Load()
			if err != nil {
				t.Fatal(err)
			}
			if r := u.Skills[curator.Copy{Layer: layering.Workspace, Name: "pdf"}]; r == nil || r.UseCount != 1 {
				t.Errorf("pdf counted %+v, want once", r)
			}
		})
	}
}
