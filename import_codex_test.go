package skillsync

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/agent/codex"
)

// copyFixture copies the folder src to dst with {{WS}} made ws.
func copyFixture(t *testing.T, src, dst, ws string) {
	t.Helper()
	quoted, _ := json.Marshal(ws)
	esc := string(quoted[1 : len(quoted)-1])
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, []byte(strings.ReplaceAll(string(data), "{{WS}}", esc)), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestImportCodexSessions: a skill the user named ($notes) and the
// SKILL.md files the model read with a shell command (shell, shell_command,
// exec_command, local_shell_call; argv and scripts) are uses; a fork's
// copies, reads of other files, other tools and another folder's sessions
// are not; a second import counts nothing.
func TestImportCodexSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _, ws := curateWorkspace(t)
	sessions := t.TempDir()
	copyFixture(t, filepath.Join("testdata", "agents", "codex", "sessions"), sessions, ws)

	r, err := e.ImportUsage(ctx, codex.New(ws, sessions), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	// notes: the injection, call_2, call_3; kept: call_1, call_4. The fork
	// repeats the injection and call_1; call_z read another folder's skill.
	if r.Uses != 5 || r.Views != 0 || r.Duplicates != 2 || r.Unknown != 1 || r.Files != 2 || r.Malformed != 0 {
		t.Errorf("import: %+v", r)
	}
	notes, kept := usageRecord(t, e, "workspace/notes"), usageRecord(t, e, "workspace/kept")
	if notes.UseCount != 3 || kept.UseCount != 2 || notes.ViewCount != 0 {
		t.Errorf("notes %+v, kept %+v", notes, kept)
	}
	r, err = e.ImportUsage(ctx, codex.New(ws, sessions), time.Time{})
	if err != nil || r.Uses != 0 || r.Files != 0 {
		t.Errorf("second import: %+v %v", r, err)
	}
}
