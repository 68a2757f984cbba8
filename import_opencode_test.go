package skillsync

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/agent/opencode"
	"github.com/skillsync/skillsync/internal/opencodetest"
)

// TestImportOpenCodeSessions: completed skill tool calls are uses and
// reads of a SKILL.md views, in the workspace's sessions and its
// subagents'; a refused call and another folder's session are not; an
// import again counts nothing, and a part rewritten with the same call is
// not counted twice. A file named opencode.db that is no SQLite database
// is said, naming it.
func TestImportOpenCodeSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _, ws := importWorkspace(t)
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

// TestImportOpenCodeDatabase: OpenCode 1.2 copied the JSON storage into
// opencode.db (the same ids) and went on writing there. Each call is
// counted once across the storage and the database: the storage's three
// (two uses, a view) once, the database's new call once; an import again
// counts nothing, and neither does a call written again (a part updated
// in place).
func TestImportOpenCodeDatabase(t *testing.T) {
	ctx := context.Background()
	e, _, ws := importWorkspace(t)
	data := t.TempDir()
	copyFixture(t, filepath.Join("testdata", "agents", "opencode", "data"), data, ws)
	const migrated = int64(1772400000000)
	db := opencodetest.Create(t, filepath.Join(data, "opencode.db"), true)
	db.Migrate(filepath.Join(data, "storage"), migrated)
	db.Session("4b0ea68d7af9a6031a7ffda7ad66e0cb83315750", "ses_c3", ws, migrated+60_000)
	db.Message("ses_c3", "msg_c3a", migrated+60_000)
	part := func(status string, updated int64) {
		db.Part("ses_c3", "msg_c3a", "prt_c3", updated, `{"type":"tool","callID":"toolu_oc12","tool":"skill","state":{"status":"`+status+`","input":{"name":"notes"},"output":"<skill_content name=\"notes\">","title":"Loaded skill: notes","metadata":{},"time":{"start":`+fmt.Sprint(migrated+61_000)+`,"end":`+fmt.Sprint(migrated+61_300)+`}}}`)
	}
	part("completed", migrated+61_300)

	r, err := e.ImportUsage(ctx, opencode.New(ws, data), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Uses != 3 || r.Views != 1 || r.Duplicates != 3 || r.Unknown != 0 || len(r.Unreadable) != 0 {
		t.Errorf("import: %+v", r)
	}
	notes, kept := usageRecord(t, e, "workspace/notes"), usageRecord(t, e, "workspace/kept")
	if notes.UseCount != 2 || kept.UseCount != 1 || kept.ViewCount != 1 {
		t.Errorf("notes %+v, kept %+v", notes, kept)
	}
	r, err = e.ImportUsage(ctx, opencode.New(ws, data), time.Time{})
	if err != nil || r.Uses != 0 || r.Views != 0 || r.Duplicates != 0 || len(r.Unreadable) != 0 {
		t.Errorf("second import: %+v %v", r, err)
	}
	part("completed", migrated+120_000)
	r, err = e.ImportUsage(ctx, opencode.New(ws, data), time.Time{})
	if err != nil || r.Uses != 0 || r.Duplicates != 1 {
		t.Errorf("after the part was written again: %+v %v", r, err)
	}
	if notes := usageRecord(t, e, "workspace/notes"); notes.UseCount != 2 {
		t.Errorf("notes %+v", notes)
	}
}
