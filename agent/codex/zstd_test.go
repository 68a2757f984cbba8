package codex

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/internal/platform"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// zrig is one Codex home with one rollout, moved, compressed and
// materialized as Codex does, and the marks of the imports so far.
type zrig struct {
	ws, sessions, archived string
	path                   string // the rollout's plain path, where it is now
	im                     *Importer
	marks                  agent.Marks
}

// zstep is one thing Codex or skillsync does to the rollout.
type zstep func(t *testing.T, r *zrig)

// writeCalls appends to the plain rollout a call reading a SKILL.md for
// each id, after a session_meta when the file is new.
func writeCalls(ids ...string) zstep {
	return func(t *testing.T, r *zrig) {
		t.Helper()
		var lines []string
		if !skilltest.Exists(r.path) {
			lines = append(lines, `{"timestamp":"2026-03-01T10:00:00.000Z","type":"session_meta","payload":{"id":"0199a1b2-0000-7000-8000-00000000000c","timestamp":"2026-03-01T10:00:00.000Z","cwd":"`+r.ws+`","originator":"codex_cli_rs","cli_version":"0.137.0","source":"cli"}}`)
		}
		for _, id := range ids {
			lines = append(lines, callLine(r.ws, id))
		}
		skilltest.AppendLines(t, r.path, lines...)
	}
}

func callLine(ws, id string) string {
	return `{"timestamp":"2026-03-01T10:05:00.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"cat\",\"` + ws + `/skills/kept/SKILL.md\"]}","call_id":"` + id + `"}}`
}

// zstdFile writes data compressed to path, as Codex's worker does (zstd
// level 3, which the encoder's default is).
func zstdFile(t *testing.T, path string, data []byte, opts ...zstd.EOption) {
	t.Helper()
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// compressKeep writes the rollout's .zst beside it, with its time; the
// plain one is still there, as between the worker's verify and its
// delete.
func compressKeep(t *testing.T, r *zrig) {
	t.Helper()
	info, err := os.Stat(r.path)
	if err != nil {
		t.Fatal(err)
	}
	zstdFile(t, r.path+zstExt, []byte(skilltest.ReadFile(t, r.path)))
	if err := os.Chtimes(r.path+zstExt, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// compress is the worker's whole run: the .zst written, the plain
// rollout removed.
func compress(t *testing.T, r *zrig) {
	t.Helper()
	compressKeep(t, r)
	removePlain(t, r)
}

func removePlain(t *testing.T, r *zrig) {
	t.Helper()
	if err := os.Remove(r.path); err != nil {
		t.Fatal(err)
	}
}

func removeZst(t *testing.T, r *zrig) {
	t.Helper()
	if err := os.Remove(r.path + zstExt); err != nil {
		t.Fatal(err)
	}
}

// materializeKeep writes the plain rollout back from the .zst, which is
// still there, as Codex does when a compressed thread is resumed.
func materializeKeep(t *testing.T, r *zrig) {
	t.Helper()
	d, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	data, err := d.DecodeAll([]byte(skilltest.ReadFile(t, r.path+zstExt)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// materialize is the whole of it: the plain rollout back, the .zst
// removed.
func materialize(t *testing.T, r *zrig) {
	t.Helper()
	materializeKeep(t, r)
	removeZst(t, r)
}

// moveTo moves the rollout, plain or compressed, to dir: archive and
// unarchive.
func moveTo(dir func(r *zrig) string) zstep {
	return func(t *testing.T, r *zrig) {
		t.Helper()
		to := filepath.Join(dir(r), filepath.Base(r.path))
		if err := os.MkdirAll(dir(r), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, ext := range []string{"", zstExt} {
			if skilltest.Exists(r.path + ext) {
				if err := os.Rename(r.path+ext, to+ext); err != nil {
					t.Fatal(err)
				}
			}
		}
		r.path = to
	}
}

func archive(t *testing.T, r *zrig) { moveTo(func(r *zrig) string { return r.archived })(t, r) }

func unarchive(t *testing.T, r *zrig) {
	moveTo(func(r *zrig) string { return filepath.Join(r.sessions, "2026", "03", "01") })(t, r)
}

// garble overwrites the .zst with bytes that do not decompress, of its
// size and time: an import that decompresses it again says so.
func garble(t *testing.T, r *zrig) {
	t.Helper()
	info, err := os.Stat(r.path + zstExt)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.path+zstExt, bytes.Repeat([]byte{0xff}, int(info.Size())), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(r.path+zstExt, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// imported runs an import from the marks so far and wants the calls ids
// counted, and no rollout unreadable.
func imported(ids ...string) zstep {
	return func(t *testing.T, r *zrig) {
		t.Helper()
		b, err := r.im.Import(context.Background(), time.Time{}, r.marks)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ev := range b.Events {
			got = append(got, ev.ID)
		}
		if !reflect.DeepEqual(got, ids) || len(b.Unreadable) > 0 {
			t.Fatalf("calls %v, want %v; unreadable %q", got, ids, b.Unreadable)
		}
		r.marks = b.Marks
	}
}

// TestCompressedRollouts: Codex (0.137.0 on, codex-rs
// rollout/src/compression.rs) compresses a rollout idle for a week to
// <name>.jsonl.zst and removes the plain one, below sessions and in the
// archive alike, and writes the plain one back (materializes it) when the
// thread is resumed, both there for a moment. Each call is counted once
// whichever form it was read in, and none written before a compression
// is lost.
func TestCompressedRollouts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		steps []zstep
	}{
		{"compressed before any import", []zstep{writeCalls("c1", "c2"), compress, imported("c1", "c2")}},
		{"read plain, then compressed", []zstep{writeCalls("c1"), imported("c1"), compress, imported()}},
		{"calls written since the last import, then compressed", []zstep{writeCalls("c1"), imported("c1"), writeCalls("c2"), compress, imported("c2")}},
		{"read compressed once is not decompressed again", []zstep{writeCalls("c1"), imported("c1"), compress, imported(), garble, imported()}},
		{"read compressed, then materialized with a call", []zstep{writeCalls("c1"), compress, imported("c1"), materialize, writeCalls("c2"), imported("c2"), imported()}},
		{"read compressed, then materialized", []zstep{writeCalls("c1"), compress, imported("c1"), materialize, imported()}},
		{"both while compressing", []zstep{writeCalls("c1"), compressKeep, imported("c1"), removePlain, imported()}},
		{"both while materializing", []zstep{writeCalls("c1"), compress, imported("c1"), materializeKeep, writeCalls("c2"), imported("c2"), removeZst, writeCalls("c3"), imported("c3")}},
		{"both, the plain one written to, before any import", []zstep{writeCalls("c1"), compressKeep, writeCalls("c2"), imported("c1", "c2")}},
		{"archived compressed, before any import", []zstep{writeCalls("c1"), archive, compress, imported("c1")}},
		{"read, then archived and compressed", []zstep{writeCalls("c1"), imported("c1"), writeCalls("c2"), archive, compress, imported("c2"), imported()}},
		{"compressed, then archived", []zstep{writeCalls("c1"), compress, imported("c1"), archive, imported()}},
		{"archived compressed, then taken out and resumed", []zstep{writeCalls("c1"), archive, compress, imported("c1"), unarchive, imported(), materialize, writeCalls("c2"), imported("c2")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			r := &zrig{
				ws:       filepath.Join(t.TempDir(), "w"),
				sessions: filepath.Join(home, "sessions"),
				archived: filepath.Join(home, archivedDir),
			}
			r.path = filepath.Join(r.sessions, "2026", "03", "01", "rollout-2026-03-01T10-00-00-0199a1b2-0000-7000-8000-00000000000c.jsonl")
			r.im = New(r.ws, r.sessions)
			for _, step := range c.steps {
				step(t, r)
			}
		})
	}
}

// TestCompressedRolloutsNotRead: a compressed rollout that does not
// decompress, or decompresses past the limit, or asks the decoder for a
// window over its bound, is said, by its name, and hands on none of its
// calls; the rollouts beside it are read, the compressed ones with the
// decoder it left. A link is not followed; a FIFO or a folder of a
// rollout's name is passed over, no read waiting on it.
func TestCompressedRolloutsNotRead(t *testing.T) {
	t.Parallel()
	meta := func(ws string) string {
		return `{"timestamp":"2026-03-01T10:00:00.000Z","type":"session_meta","payload":{"id":"x","cwd":"` + ws + `"}}`
	}
	rollout := func(ws string, ids ...string) []byte {
		lines := []string{meta(ws)}
		for _, id := range ids {
			lines = append(lines, callLine(ws, id))
		}
		return []byte(strings.Join(lines, "\n") + "\n")
	}
	for _, c := range []struct {
		name string
		// write puts the rollout at path, the workspace's being ws
		write func(t *testing.T, ws, path string)
		said  string // in the unreadable message, "" for none
	}{
		{"not zstd", func(t *testing.T, ws, path string) {
			if err := os.WriteFile(path, []byte("not zstd at all, not even a frame"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "does not decompress"},
		{"a byte changed", func(t *testing.T, ws, path string) {
			zstdFile(t, path, rollout(ws, "bad1", "bad2", "bad3"))
			data := []byte(skilltest.ReadFile(t, path))
			data[len(data)-6] ^= 0x55 // in the last block, past the first line
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "does not decompress"},
		{"cut short", func(t *testing.T, ws, path string) {
			zstdFile(t, path, rollout(ws, "bad1", "bad2", "bad3"))
			data := []byte(skilltest.ReadFile(t, path))
			if err := os.WriteFile(path, data[:len(data)-8], 0o644); err != nil {
				t.Fatal(err)
			}
		}, "does not decompress"},
		{"decompresses past the limit", func(t *testing.T, ws, path string) {
			data := rollout(ws, "bad1")
			pad := []byte(`{"type":"event_msg","payload":{"type":"token_count","x":"` + strings.Repeat("a", 1000) + `"}}` + "\n")
			data = append(data, bytes.Repeat(pad, 3000)...) // 3 MiB
			zstdFile(t, path, data)
			if info, err := os.Stat(path); err != nil || info.Size() > 64<<10 {
				t.Fatalf("the bomb is not small: %v %v", info.Size(), err)
			}
		}, "over 1 MiB"},
		{"a window over the bound", func(t *testing.T, ws, path string) {
			// One frame of one raw block, whose header asks for a 64
			// MiB window (Window_Descriptor: exponent 16, RFC 8878
			// 3.1.1.1.2); an encoder sizes the window to the input.
			data := rollout(ws, "bad1")
			frame := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 16 << 3}
			n := len(data)<<3 | 1 // raw, last
			frame = append(frame, byte(n), byte(n>>8), byte(n>>16))
			if err := os.WriteFile(path, append(frame, data...), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "does not decompress"},
		{"empty frames before its first line", func(t *testing.T, ws, path string) {
			// 32 MiB of frames holding nothing (9 bytes each, as the
			// encoder writes one), before the session_meta: read
			// unbuffered, a system call each, a minute to learn whose
			// the rollout is.
			var buf bytes.Buffer
			buf.Write(bytes.Repeat([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x00, 0x01, 0x00, 0x00}, 32<<20/9))
			zstdFile(t, path, rollout(ws, "bad1"))
			buf.WriteString(skilltest.ReadFile(t, path))
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "frames that hold nothing"},
		{"a FIFO", func(t *testing.T, ws, path string) {
			if err := platform.Mkfifo(path); err != nil {
				t.Skip(err)
			}
		}, ""},
		{"a folder", func(t *testing.T, ws, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"a link", func(t *testing.T, ws, path string) {
			target := filepath.Join(t.TempDir(), filepath.Base(path))
			zstdFile(t, target, rollout(ws, "bad1"))
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ws := filepath.Join(t.TempDir(), "w")
			home := t.TempDir()
			sessions := filepath.Join(home, "sessions")
			day := filepath.Join(sessions, "2026", "03", "01")
			if err := os.MkdirAll(day, 0o755); err != nil {
				t.Fatal(err)
			}
			zstdFile(t, filepath.Join(day, "rollout-2026-03-01T09-00-00-a.jsonl.zst"), rollout(ws, "good1"))
			path := filepath.Join(day, "rollout-2026-03-01T10-00-00-b.jsonl.zst")
			c.write(t, ws, path)
			// After it, with the decoder it left, another compressed
			// one, and a plain one.
			zstdFile(t, filepath.Join(day, "rollout-2026-03-01T11-00-00-c.jsonl.zst"), rollout(ws, "good2"))
			skilltest.AppendLines(t, filepath.Join(day, "rollout-2026-03-01T12-00-00-d.jsonl"), strings.Split(strings.TrimSpace(string(rollout(ws, "good3"))), "\n")...)
			im := New(ws, sessions)
			im.limits = agent.Limits{Line: agent.MaxLine, File: 1 << 20}
			b, err := im.Import(context.Background(), time.Time{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ev := range b.Events {
				got = append(got, ev.ID)
			}
			if want := []string{"good1", "good2", "good3"}; !reflect.DeepEqual(got, want) {
				t.Errorf("calls %v, want %v", got, want)
			}
			switch {
			case c.said == "" && len(b.Unreadable) != 0:
				t.Errorf("unreadable %q", b.Unreadable)
			case c.said != "" && (len(b.Unreadable) != 1 || !strings.Contains(b.Unreadable[0], path) || !strings.Contains(b.Unreadable[0], c.said)):
				t.Errorf("unreadable %q, want one naming %s and saying %q", b.Unreadable, path, c.said)
			}
		})
	}
}
