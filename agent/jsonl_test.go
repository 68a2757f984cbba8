package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/skilltest"
)

func readAll(t *testing.T, path string, prev Mark, max int) ([]string, Read) {
	t.Helper()
	var got []string
	r, err := ReadNew(context.Background(), path, prev, Limits{Line: max, File: MaxFile}, func(line []byte, off int64) error {
		got = append(got, string(line))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, r
}

// TestReadNewAppendOnly: each read hands on only the lines added since
// the last one; a line still being written waits for its newline.
func TestReadNewAppendOnly(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	skilltest.Append(t, path, "{\"a\":1}\n{\"b\":1}\n{\"part")
	got, r := readAll(t, path, Mark{}, 100)
	if strings.Join(got, ",") != `{"a":1},{"b":1}` || r.Mark.Offset != 16 || !r.New || r.Rewritten {
		t.Fatalf("first read: %q %+v", got, r)
	}
	skilltest.Append(t, path, "ial\":1}\n{\"c\":1}\n")
	got, r2 := readAll(t, path, r.Mark, 100)
	if strings.Join(got, ",") != `{"partial":1},{"c":1}` || r2.Rewritten {
		t.Fatalf("second read: %q %+v", got, r2)
	}
	got, r3 := readAll(t, path, r2.Mark, 100)
	if len(got) != 0 || r3.New || r3.Mark != r2.Mark {
		t.Errorf("a read of an unchanged file: %q %+v", got, r3)
	}
}

// TestReadNewRewritten: a file that no longer starts with what was read
// is read again from the start; so is one that shrank.
func TestReadNewRewritten(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	skilltest.Append(t, path, "a\nb\n")
	_, r := readAll(t, path, Mark{}, 100)
	if err := os.WriteFile(path, []byte("x\ny\nz\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, r2 := readAll(t, path, r.Mark, 100)
	if strings.Join(got, ",") != "x,y,z" || !r2.Rewritten {
		t.Errorf("rewritten file: %q %+v", got, r2)
	}
	if err := os.WriteFile(path, []byte("q\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, r3 := readAll(t, path, r2.Mark, 100)
	if strings.Join(got, ",") != "q" || !r3.Rewritten {
		t.Errorf("shrunk file: %q %+v", got, r3)
	}
}

// TestReadNewSkipsUntouchedFile: a file with the size and time of its
// mark is not read, whatever it holds.
func TestReadNewSkipsUntouchedFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	skilltest.Append(t, path, "a\nb\n")
	_, r := readAll(t, path, Mark{}, 100)
	if err := os.WriteFile(path, []byte("c\nd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, time.Now(), r.Mark.ModTime); err != nil {
		t.Fatal(err)
	}
	if got, _ := readAll(t, path, r.Mark, 100); len(got) != 0 {
		t.Errorf("an untouched file was read: %q", got)
	}
}

// TestReadNewLongLines: a line over the limit is skipped and counted,
// also when it spans many buffer fills, and the hash still covers it so
// the next read goes on after it; an unterminated long line waits.
func TestReadNewLongLines(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	big := strings.Repeat("x", 200<<10)
	skilltest.Append(t, path, "a\n"+big+"\nb\n"+big)
	got, r := readAll(t, path, Mark{}, 1000)
	if strings.Join(got, ",") != "a,b" || r.TooLong != 1 || r.Mark.Offset != int64(2+len(big)+1+2) {
		t.Fatalf("got %q, %+v", got, r)
	}
	skilltest.Append(t, path, "\nc\n")
	got, r2 := readAll(t, path, r.Mark, 1000)
	if strings.Join(got, ",") != "c" || r2.TooLong != 1 || r2.Rewritten {
		t.Errorf("after the long line ended: %q %+v", got, r2)
	}
	// A line of exactly the limit is kept.
	exact := strings.Repeat("y", 1000)
	skilltest.Append(t, path, exact+"\n")
	if got, _ := readAll(t, path, r2.Mark, 1000); len(got) != 1 || got[0] != exact {
		t.Errorf("a line of the limit was not kept: %d lines", len(got))
	}
}

// TestReadNewRefusesLinks: a symbolic link is not followed.
func TestReadNewRefusesLinks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	skilltest.Append(t, filepath.Join(dir, "real.jsonl"), "a\n")
	if err := os.Symlink("real.jsonl", filepath.Join(dir, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	_, err := ReadNew(context.Background(), filepath.Join(dir, "link.jsonl"), Mark{}, DefaultLimits(), func([]byte, int64) error { return nil })
	if err == nil {
		t.Error("a link was followed")
	}
}

// bytesRead returns how many bytes this process has read (rchar in
// /proc/self/io), skipping the test where that is not known. It counts
// every test's reads: a test that uses it must not be parallel.
func bytesRead(t *testing.T) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skipf("bytes read are not known here: %v", err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "rchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("no rchar in /proc/self/io")
	return 0
}

// sparse makes a file of size bytes of NULs, one line with no newline,
// taking no disk.
func sparse(t *testing.T, size int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
	return path
}

// endsAfter is a context that ends once its Err has been asked n times:
// the read under test is then inside its one long line, however fast the
// machine.
type endsAfter struct {
	context.Context
	n atomic.Int64
}

func (c *endsAfter) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestReadNewStopsInsideALine: a context that ends while a line of a
// gigabyte is being read (and skipped as too long) stops the read there;
// it was checked only between lines, so SIGTERM waited for the whole line.
func TestReadNewStopsInsideALine(t *testing.T) {
	// Not parallel: bytesRead counts the whole process's reads, and a
	// parallel test's reads would count as this one's.
	path := sparse(t, 1<<30)
	ctx := &endsAfter{Context: context.Background()}
	ctx.n.Store(2)
	before := bytesRead(t)
	_, err := ReadNew(ctx, path, Mark{}, Limits{Line: MaxLine, File: 2 << 30}, func([]byte, int64) error { return nil })
	if n := bytesRead(t) - before; n > 64<<20 {
		t.Errorf("read %d MiB after the context ended", n>>20)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// TestReadNewRefusesHugeFile: a file over the limit is not read at all,
// and the error says why.
func TestReadNewRefusesHugeFile(t *testing.T) {
	// Not parallel, as TestReadNewStopsInsideALine.
	path := sparse(t, MaxFile+1)
	called := false
	before := bytesRead(t)
	r, err := ReadNew(context.Background(), path, Mark{Offset: 3, Hash: "h"}, DefaultLimits(), func([]byte, int64) error {
		called = true
		return nil
	})
	if n := bytesRead(t) - before; n > 1<<20 {
		t.Errorf("read %d MiB of a file over the limit", n>>20)
	}
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "over the limit of 1024 MiB") || called {
		t.Errorf("err = %v, fn called %v", err, called)
	}
	if r.Mark != (Mark{Offset: 3, Hash: "h"}) {
		t.Errorf("mark = %+v, want the previous one kept", r.Mark)
	}
}

// TestListJSONL: the .jsonl files down to the depth, sorted, relative to
// the root; deeper ones and other files are not listed, links named
// .jsonl are listed apart, and a missing root lists none.
func TestListJSONL(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"a.jsonl", "x/b.jsonl", "x/y/c.jsonl", "x/y/z/d.jsonl", "x/e.json"} {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "a.jsonl"), filepath.Join(root, "x", "l.jsonl")); err != nil {
		t.Fatal(err)
	}
	got, links, err := ListJSONL(root, 3)
	want := []string{"a.jsonl", filepath.Join("x", "b.jsonl"), filepath.Join("x", "y", "c.jsonl")}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("ListJSONL = %q, %v; want %q", got, err, want)
	}
	if want := []string{filepath.Join("x", "l.jsonl")}; !slices.Equal(links, want) {
		t.Errorf("ListJSONL's links = %q, want %q", links, want)
	}
	if got, links, err := ListJSONL(filepath.Join(root, "none"), 3); err != nil || len(got)+len(links) != 0 {
		t.Errorf("missing root: %q, %q, %v", got, links, err)
	}
}

// TestReadNewTornLine: a last line the agent never finished (it was
// killed mid-write) and the line its next write appended are two lines:
// the torn part does not parse, the next one does. A line whose end came
// slowly is one line.
func TestReadNewTornLine(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	skilltest.Append(t, path, "{\"a\":1}\n{\"tool\":\"Sk")
	got, r := readAll(t, path, Mark{}, 100)
	if strings.Join(got, ",") != `{"a":1}` {
		t.Fatalf("first read: %q %+v", got, r)
	}
	skilltest.Append(t, path, "{\"b\":2}\n{\"c\":3}\n")
	got, _ = readAll(t, path, r.Mark, 100)
	if strings.Join(got, "|") != `{"tool":"Sk|{"b":2}|{"c":3}` {
		t.Errorf("after a torn line: %q", got)
	}
	// Read anew from the start (no mark), nothing says where the write
	// was cut: the joined line stays one.
	got, _ = readAll(t, path, Mark{}, 100)
	if len(got) != 3 || got[1] != `{"tool":"Sk{"b":2}` {
		t.Errorf("read from the start: %q", got)
	}
}

// TestTornAt finds the whole object that ends a line cut short, and none
// in a line that parses or holds no whole object at its end.
func TestTornAt(t *testing.T) {
	t.Parallel()
	whole := `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t"}]}}`
	for line, want := range map[string]int{
		`{"type":"assist` + whole:      15,
		`{"a":{"b":[1,` + whole:        13,
		whole:                          -1,
		`{"type":"assist`:              -1,
		`{"a":1,"b":{"c":2}} trailing`: -1,
		``:                             -1,
	} {
		if got := TornAt([]byte(line)); got != want {
			t.Errorf("TornAt(%q) = %d, want %d", line, got, want)
		}
	}
}

// TestReadRecordFailingMidway: a read that hands lines on and then fails
// (a compressed file changed between its two passes, an I/O error) keeps
// the file's mark, so its lines come again next time: the events fn
// added from them that have an id are kept (the calls seen count them
// once), those without one are dropped, else counted now and again then.
func TestReadRecordFailingMidway(t *testing.T) {
	t.Parallel()
	b := &Batch{Marks: Marks{}, Events: []Event{{Skill: "before"}}}
	prev := Mark{Offset: 3, Size: 3, Hash: "h"}
	failing := func(ctx context.Context, path string, prev Mark, lim Limits, fn func([]byte, int64) error) (Read, error) {
		for i, line := range []string{"with-id", "without"} {
			if err := fn([]byte(line), int64(i)); err != nil {
				return Read{Mark: prev}, err
			}
		}
		return Read{Mark: prev}, errors.New("read " + path + ": input/output error")
	}
	err := b.ReadRecord(context.Background(), failing, DefaultLimits(), Marks{"k": prev}, "k", "/r/k.jsonl", func(line []byte, _ int64) error {
		ev := Event{Skill: string(line)}
		if string(line) == "with-id" {
			ev.ID = "call_1"
		}
		b.Events = append(b.Events, ev)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range b.Events {
		got = append(got, ev.Skill)
	}
	if strings.Join(got, ",") != "before,with-id" || b.Marks["k"] != prev || len(b.Unreadable) != 1 {
		t.Errorf("events %v, mark %+v, unreadable %q", got, b.Marks["k"], b.Unreadable)
	}
}
