package skillsync

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/agent/opencode"
)

// TestImportOpenCodeSessions: completed skill tool calls are uses and
// reads of a SKILL.md views, in the workspace's sessions and its
// subagents'; a refused call and another folder's session are not; an
// import again counts nothing, and a part rewritten with the same call is
// not counted twice. A SQLite database beside storage/ is said to be
// left unread.
func TestImportOpenCodeSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _, ws := curateWorkspace(t)
	data := t.TempDir()
	copyFixture(t, filepath.Join("testdata", "agents", "opencode", "data"), data, ws)

	r, err := e.ImportUsage(ctx, opencode.New(ws, data), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Uses != 2 || r.Views != 1 || r.Unknown != 0 || r.Duplicates != 0 || len(r.Unreadable) != 0 {
		t.Errorf("import: %+v", r)
	}
	notes, kept := usageRecord(t, e, "workspace/notes"), usageRecord(t, e, "workspace/kept")
	if notes.UseCount != 1 || kept.UseCount != 1 || kept.ViewCount != 1 {
		t.Errorf("notes %+v, kept %+v", notes, kept)
	}
	part := filepath.Join(data, "storage", "part", "msg_b2a", "prt_05.json")
	body, _ := os.ReadFile(part)
	if err := os.WriteFile(part, []byte(strings.Replace(string(body), "Loaded skill", "Loaded the skill", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "opencode.db"), []byte("SQLite format 3\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err = e.ImportUsage(ctx, opencode.New(ws, data), time.Time{})
	if err != nil || r.Uses != 0 || r.Duplicates != 1 || len(r.Unreadable) != 1 || !strings.Contains(r.Unreadable[0], "opencode.db") {
		t.Errorf("second import: %+v %v", r, err)
	}
}
