package agent_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/agent/codex"
)

// pathUsage is usageFile for events that name a skill by the path of its
// SKILL.md, as Codex's reads do: the skill is the SKILL.md's folder.
type pathUsage struct{ *usageFile }

func (u pathUsage) Resolve(key string, ev agent.Event) (string, bool) {
	if ev.Skill == "" && filepath.Base(ev.Path) == "SKILL.md" {
		ev.Skill = filepath.Base(filepath.Dir(ev.Path))
	}
	return u.usageFile.Resolve(key, ev)
}

// codexRollout is one rollout of a Codex session of ws, below sessions,
// plain at path or compressed at path+".zst", as Codex writes them.
type codexRollout struct {
	ws, sessions, path string
}

func newCodexRollout(t *testing.T, ws string) *codexRollout {
	t.Helper()
	sessions := filepath.Join(t.TempDir(), "sessions")
	day := filepath.Join(sessions, "2026", "03", "01")
	if err := os.MkdirAll(day, 0o755); err != nil {
		t.Fatal(err)
	}
	return &codexRollout{ws: ws, sessions: sessions, path: filepath.Join(day, "rollout-2026-03-01T10-00-00-0199a1b2-0000-7000-8000-00000000000c.jsonl")}
}

// lines are the rollout's lines: its session_meta, then a call reading
// pdf's SKILL.md with a shell command for each id.
func (r *codexRollout) lines(ids ...string) string {
	out := `{"timestamp":"2026-03-01T10:00:00.000Z","type":"session_meta","payload":{"id":"0199a1b2-0000-7000-8000-00000000000c","timestamp":"2026-03-01T10:00:00.000Z","cwd":"` + r.ws + `","originator":"codex_cli_rs","cli_version":"0.137.0","source":"cli"}}` + "\n"
	for _, id := range ids {
		out += `{"timestamp":"2026-03-01T10:05:00.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"cat\",\"` + r.ws + `/skills/pdf/SKILL.md\"]}","call_id":"` + id + `"}}` + "\n"
	}
	return out
}

func (r *codexRollout) plain(t *testing.T, content string) {
	t.Helper()
	if err := os.WriteFile(r.path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// zst writes content compressed, as Codex's worker does (level 3).
func (r *codexRollout) zst(t *testing.T, content string) {
	t.Helper()
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(content)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.path+".zst", buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (r *codexRollout) remove(t *testing.T, ext string) {
	t.Helper()
	if err := os.Remove(r.path + ext); err != nil {
		t.Fatal(err)
	}
}

// TestCompressedRolloutsCountEachCallOnce: through whole imports into a
// usage file, each call of a Codex rollout counts once however the
// rollout moves between plain and compressed: compressed with a line the
// last import left unfinished; compressed, written back, written to and
// compressed again; a stale .zst beside the plain one (the plain one
// read, then gone, then written back from the stale one and written to);
// the plain one half written back from the .zst while an import reads it.
func TestCompressedRolloutsCountEachCallOnce(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		steps func(t *testing.T, r *codexRollout, imported func(want int))
	}{
		{"a line unfinished, then finished and compressed", func(t *testing.T, r *codexRollout, imported func(int)) {
			full := r.lines("c1", "c2", "c3")
			cut := strings.Index(full, `"c2"`) // c2's line without its end
			r.plain(t, full[:cut])
			imported(1)
			r.zst(t, full)
			r.remove(t, "")
			imported(3)
			imported(3)
		}},
		{"compressed, written back, written to, compressed again", func(t *testing.T, r *codexRollout, imported func(int)) {
			r.zst(t, r.lines("c1"))
			imported(1)
			r.plain(t, r.lines("c1", "c2"))
			r.remove(t, ".zst")
			imported(2)
			r.zst(t, r.lines("c1", "c2", "c3"))
			r.remove(t, "")
			imported(3)
			imported(3)
		}},
		{"a stale .zst beside the plain one", func(t *testing.T, r *codexRollout, imported func(int)) {
			r.plain(t, r.lines("c1", "c2"))
			r.zst(t, r.lines("c1"))
			imported(2)
			r.remove(t, "")
			imported(2) // the .zst, shorter: read again from its start, c1 counted already
			r.plain(t, r.lines("c1", "c3"))
			r.remove(t, ".zst")
			imported(3)
			imported(3)
		}},
		{"the plain one half written back while imported", func(t *testing.T, r *codexRollout, imported func(int)) {
			full := r.lines("c1", "c2", "c3")
			r.zst(t, full)
			imported(3)
			r.plain(t, full[:strings.Index(full, `"c2"`)])
			imported(3)
			r.plain(t, full+r.lines("c4")[len(r.lines()):])
			r.remove(t, ".zst")
			imported(4)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ws, _, store, j, rec := usageWorkspace(t)
			r := newCodexRollout(t, ws)
			c.steps(t, r, func(want int) {
				t.Helper()
				rep, err := j.Import(context.Background(), pathUsage{rec}, codex.New(ws, r.sessions), time.Time{})
				if err != nil || len(rep.Unreadable) > 0 {
					t.Fatalf("the import: %+v, %v", rep, err)
				}
				wantCount(t, store, want, "after the import")
			})
		})
	}
}
