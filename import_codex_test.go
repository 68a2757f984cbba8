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

	"github.com/klauspost/compress/zstd"

	"github.com/skillsync/skillsync/agent/codex"
	"github.com/skillsync/skillsync/internal/skilltest"
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
	e, _, ws := importWorkspace(t)
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

// TestImportCodexResumesInTheTurnsFolder: a turn_context moved the
// session from the folder it started in to the workspace's root, and the
// model read a skill by a relative path after an import had read the
// turn_context: the next import resolves it where the session was.
func TestImportCodexResumesInTheTurnsFolder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _, ws := importWorkspace(t)
	sessions := t.TempDir()
	sub := filepath.Join(ws, "sub")
	rollout := filepath.Join(sessions, "2026", "03", "04", "rollout-2026-03-04T09-00-00-0199a1b2-0000-7000-8000-000000000009.jsonl")
	line := func(v string) string {
		q, _ := json.Marshal(v)
		return string(q[1 : len(q)-1])
	}
	skilltest.Append(t, rollout, `{"timestamp":"2026-03-04T09:00:00.000Z","type":"session_meta","payload":{"id":"0199a1b2-0000-7000-8000-000000000009","timestamp":"2026-03-04T09:00:00.000Z","cwd":"`+line(sub)+`","originator":"codex_cli_rs","cli_version":"0.80.0","instructions":null,"source":"cli","git":{}}}
{"timestamp":"2026-03-04T09:00:00.100Z","type":"turn_context","payload":{"cwd":"`+line(ws)+`","approval_policy":"on-request","sandbox_policy":{"mode":"workspace-write"},"model":"gpt-5-codex","effort":"medium","summary":"auto"}}
`)
	if r, err := e.ImportUsage(ctx, codex.New(ws, sessions), time.Time{}); err != nil || r.Uses != 0 {
		t.Fatalf("first import: %+v %v", r, err)
	}
	skilltest.Append(t, rollout, `{"timestamp":"2026-03-04T09:00:02.000Z","type":"response_item","payload":{"type":"function_call","name":"shell_command","arguments":"{\"command\":\"cat skills/notes/SKILL.md\"}","call_id":"call_9"}}
`)
	r, err := e.ImportUsage(ctx, codex.New(ws, sessions), time.Time{})
	if err != nil || r.Uses != 1 || r.Unknown != 0 {
		t.Errorf("the import after the turn_context was read: %+v %v", r, err)
	}
	if n := usageRecord(t, e, "workspace/notes"); n.UseCount != 1 {
		t.Errorf("notes %+v", n)
	}
}

// TestImportCodexCompressedRollouts: Codex 0.137 compresses rollouts idle
// for a week to .jsonl.zst and removes the plain ones. Through the import
// state: a call written before the compression counts, those counted
// before do not count again, a compressed rollout read whole is not
// decompressed at the next import (its bytes made junk, its size and
// time kept, say nothing), and one written back plain when its thread is
// resumed goes on from its mark.
func TestImportCodexCompressedRollouts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _, ws := importWorkspace(t)
	sessions := t.TempDir()
	copyFixture(t, filepath.Join("testdata", "agents", "codex", "sessions"), sessions, ws)
	first := filepath.Join(sessions, "2026", "03", "01", "rollout-2026-03-01T10-00-00-0199a1b2-0000-7000-8000-000000000001.jsonl")
	call := func(id string) string {
		return `{"timestamp":"2026-03-08T10:00:00.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"cat\",\"skills/kept/SKILL.md\"]}","call_id":"` + id + `"}}`
	}
	if r, err := e.ImportUsage(ctx, codex.New(ws, sessions), time.Time{}); err != nil || r.Uses != 5 {
		t.Fatalf("first import: %+v %v", r, err)
	}
	skilltest.AppendLines(t, first, call("call_before_compression"))
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	var compressed []string
	plain := map[string][]byte{}
	err = filepath.WalkDir(sessions, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		data, err := os.ReadFile(p)
		plain[p] = data
		if err == nil {
			err = os.WriteFile(p+".zst", enc.EncodeAll(data, nil), 0o644)
		}
		if err == nil {
			err = os.Remove(p)
		}
		compressed = append(compressed, p+".zst")
		return err
	})
	if err != nil || len(compressed) != 3 {
		t.Fatalf("compress: %v %v", compressed, err)
	}
	r, err := e.ImportUsage(ctx, codex.New(ws, sessions), time.Time{})
	if err != nil || r.Uses != 1 || r.Duplicates != 0 || r.Files != 1 || len(r.Unreadable) != 0 {
		t.Fatalf("the import after the compression: %+v %v", r, err)
	}
	for _, p := range compressed {
		if strings.Contains(p, "-000000000003.") {
			continue // another folder's, whose first line is read at every import
		}
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, info.Size()), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, info.ModTime(), info.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
	r, err = e.ImportUsage(ctx, codex.New(ws, sessions), time.Time{})
	if err != nil || r.Uses != 0 || r.Files != 0 || len(r.Unreadable) != 0 {
		t.Fatalf("the import of the untouched compressed rollouts: %+v %v", r, err)
	}
	// Resumed: Codex writes the plain rollout back, removes the .zst and
	// appends to the plain one.
	if err := os.WriteFile(first, plain[first], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(first + ".zst"); err != nil {
		t.Fatal(err)
	}
	skilltest.AppendLines(t, first, call("call_resumed"))
	r, err = e.ImportUsage(ctx, codex.New(ws, sessions), time.Time{})
	if err != nil || r.Uses != 1 || r.Duplicates != 0 || r.Files != 1 || len(r.Unreadable) != 0 {
		t.Fatalf("the import after the thread was resumed: %+v %v", r, err)
	}
	if kept := usageRecord(t, e, "workspace/kept"); kept.UseCount != 4 {
		t.Errorf("kept %+v", kept)
	}
}
