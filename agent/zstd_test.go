package agent

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// zread is one state of a record file, plain or compressed, and what a
// read of it from the mark the reads before left hands on.
type zread struct {
	zst     bool   // compressed (path.zst), else plain (path)
	content string // what it holds, decompressed
	garble  bool   // the .zst left as it was read but its bytes made junk, its size and time kept
	link    bool   // a link to the file, elsewhere, not the file
	oldTime bool   // with the time of the file before

	want      string // the lines handed on, joined by commas
	err       error  // the read's error, nil for none
	rewritten bool
}

// TestReadNewZstd: a compressed record is read as its decompressed bytes
// are, and a mark goes on from the plain file to the compressed one and
// back; a compressed file read once is not decompressed again; one that
// does not decompress, or decompresses past the limit, hands on nothing.
func TestReadNewZstd(t *testing.T) {
	t.Parallel()
	lim := Limits{Line: 1000, File: 4000}
	for _, c := range []struct {
		name  string
		reads []zread
	}{
		{"compressed", []zread{{zst: true, content: "a\nb\n", want: "a,b"}}},
		{"plain, then compressed with a line more", []zread{
			{content: "a\nb\n", want: "a,b"},
			{zst: true, content: "a\nb\nc\n", want: "c"}}},
		{"plain, then compressed as it was", []zread{
			{content: "a\nb\n", want: "a,b"},
			{zst: true, content: "a\nb\n", want: ""}}},
		{"plain, then compressed with a line more and the plain one's time", []zread{
			{content: "a\n", want: "a"},
			{zst: true, content: "a\nb\n", oldTime: true, want: "b"}}},
		{"compressed, then plain with a line more", []zread{
			{zst: true, content: "a\nb\n", want: "a,b"},
			{content: "a\nb\nc\n", want: "c"}}},
		{"compressed with a line unfinished, then plain with it finished", []zread{
			{zst: true, content: "a\nb", want: "a"},
			{content: "a\nbc\n", want: "bc"}}},
		{"compressed read once is not decompressed again", []zread{
			{zst: true, content: "a\nb\n", want: "a,b"},
			{zst: true, garble: true, want: ""}}},
		{"compressed anew", []zread{
			{zst: true, content: "a\nb\n", want: "a,b"},
			{zst: true, content: "x\ny\nz\n", want: "x,y,z", rewritten: true}}},
		{"long lines", []zread{{zst: true, content: "a\n" + strings.Repeat("x", 2000) + "\nb\n", want: "a,b"}}},
		{"past the limit", []zread{{zst: true, content: "a\n" + strings.Repeat("b\n", 2000), err: ErrTooLarge}}},
		{"past the limit after a mark", []zread{
			{zst: true, content: "a\n", want: "a"},
			{zst: true, content: "a\n" + strings.Repeat("b\n", 2000), err: ErrTooLarge}}},
		{"junk", []zread{{zst: true, garble: true, err: ErrCompressed}}},
		{"a link", []zread{{zst: true, content: "a\n", link: true, err: errLink}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "s.jsonl")
			var prev Mark
			var before time.Time
			for i, r := range c.reads {
				file := path
				if r.zst {
					file += ".zst"
				}
				os.Remove(path)
				if !r.garble || i == 0 {
					os.Remove(path + ".zst")
				}
				to := file
				if r.link {
					to = filepath.Join(t.TempDir(), "s.jsonl.zst")
					if err := os.Symlink(to, file); err != nil {
						t.Fatal(err)
					}
				}
				switch {
				case r.garble && i == 0:
					writeFile(t, to, []byte("junk, not a frame"))
				case r.garble:
					garbleKeepingStat(t, to)
				case r.zst:
					writeFile(t, to, compressed(t, r.content))
				default:
					writeFile(t, to, []byte(r.content))
				}
				if r.oldTime {
					if err := os.Chtimes(to, before, before); err != nil {
						t.Fatal(err)
					}
				}
				if info, err := os.Stat(to); err == nil {
					before = info.ModTime()
				}
				read := ReadNew
				if r.zst {
					read = ReadNewZstd
				}
				var got []string
				res, err := read(context.Background(), file, prev, lim, func(line []byte, off int64) error {
					got = append(got, string(line))
					return nil
				})
				switch {
				case r.err == errLink && err != nil:
				case r.err != nil && !errors.Is(err, r.err), r.err == nil && err != nil:
					t.Fatalf("read %d: error %v, want %v", i, err, r.err)
				case r.err != nil && !strings.Contains(err.Error(), file):
					t.Errorf("read %d: error %v does not name %s", i, err, file)
				}
				if strings.Join(got, ",") != r.want || res.Rewritten != r.rewritten {
					t.Fatalf("read %d: lines %q, rewritten %v; want %q, %v", i, got, res.Rewritten, r.want, r.rewritten)
				}
				if err == nil && r.zst && res.Mark.Packed == 0 {
					t.Errorf("read %d: mark %+v without the compressed size", i, res.Mark)
				}
				prev = res.Mark
			}
		})
	}
}

// errLink stands for the error of a link refused, whichever it is.
var errLink = errors.New("a link")

func compressed(t *testing.T, content string) []byte {
	t.Helper()
	e, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	return e.EncodeAll([]byte(content), nil)
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// garbleKeepingStat makes the file at path bytes that do not decompress,
// of its size and time.
func garbleKeepingStat(t *testing.T, path string) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, bytes.Repeat([]byte{0xff}, int(info.Size())))
	if err := os.Chtimes(path, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
}
