package curator

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/platform"
)

func TestAudit(t *testing.T) {
	t.Parallel()
	a := NewAudit(t.TempDir())
	day1 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	day2 := day1.Add(24 * time.Hour)
	if err := a.Append(Event{TS: day1, Actor: "x", Op: "stale", Target: "a"}, Event{TS: day2, Actor: "x", Op: "archived", Target: "b"}); err != nil {
		t.Fatal(err)
	}
	all, bad, err := a.Read(time.Time{}, "")
	if err != nil || len(bad) != 0 || len(all) != 2 || all[0].Target != "a" {
		t.Fatalf("read all = %+v %v %v", all, bad, err)
	}
	files, _ := filepath.Glob(filepath.Join(a.dir, "*.jsonl"))
	if len(files) != 2 || filepath.Base(files[0]) != "2026-11-01.jsonl" {
		t.Errorf("files = %v", files)
	}
	if got, _, _ := a.Read(day2, ""); len(got) != 1 || got[0].Op != "archived" {
		t.Errorf("since day2 = %+v", got)
	}
	if got, _, _ := a.Read(time.Time{}, "stale"); len(got) != 1 || got[0].Target != "a" {
		t.Errorf("op stale = %+v", got)
	}
	line, _ := os.ReadFile(files[0])
	for _, key := range []string{`"ts"`, `"actor"`, `"op"`, `"target"`, `"from"`, `"to"`, `"before_hash"`, `"after_hash"`, `"detail"`} {
		if !strings.Contains(string(line), key) {
			t.Errorf("audit line lacks %s: %s", key, line)
		}
	}
}

// TestAuditDoesNotFollowLinks: a day's file planted as a link to an
// outside file, and an .audit/ planted as a link to an outside directory,
// make Append refuse with the path; what they point at is untouched.
func TestAuditDoesNotFollowLinks(t *testing.T) {
	t.Parallel()
	day := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	ev := Event{TS: day, Actor: "x", Op: OpArchived, Target: "workspace/a"}

	t.Run("day file", func(t *testing.T) {
		skills := t.TempDir()
		victim := filepath.Join(t.TempDir(), "victim")
		if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(skills, AuditDir), 0o755); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(skills, AuditDir, "2026-11-01.jsonl")
		if err := os.Symlink(victim, link); err != nil {
			t.Fatal(err)
		}
		err := NewAudit(skills).Append(ev)
		if !errors.Is(err, ErrSymlink) || !strings.Contains(err.Error(), link) {
			t.Errorf("Append through a linked day file = %v", err)
		}
		if data, _ := os.ReadFile(victim); string(data) != "precious\n" {
			t.Errorf("the linked file was written: %q", data)
		}
	})
	t.Run("directory", func(t *testing.T) {
		skills := t.TempDir()
		outside := t.TempDir()
		if err := os.Symlink(outside, filepath.Join(skills, AuditDir)); err != nil {
			t.Fatal(err)
		}
		err := NewAudit(skills).Append(ev)
		if !errors.Is(err, ErrSymlink) || !strings.Contains(err.Error(), filepath.Join(skills, AuditDir)) {
			t.Errorf("Append into a linked directory = %v", err)
		}
		if entries, _ := os.ReadDir(outside); len(entries) != 0 {
			t.Errorf("the linked directory was written: %v", entries)
		}
	})
	t.Run("not a directory", func(t *testing.T) {
		skills := t.TempDir()
		if err := os.WriteFile(filepath.Join(skills, AuditDir), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := NewAudit(skills).Append(ev); !errors.Is(err, ErrNotDir) {
			t.Errorf("Append into a file = %v", err)
		}
	})
}

// TestAuditReadSkipsWhatIsNotAFile: reading the log never follows a link
// (to a FIFO, which would block) and says when a line is too long instead
// of dropping the rest of the day in silence.
func TestAuditReadSkipsWhatIsNotAFile(t *testing.T) {
	t.Parallel()
	skills := t.TempDir()
	dir := filepath.Join(skills, AuditDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := platform.Mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(fifo, filepath.Join(dir, "2026-11-01.jsonl")); err != nil {
		t.Fatal(err)
	}
	long := `{"ts":"2026-11-02T00:00:00Z","op":"x","target":"` + strings.Repeat("a", 2<<20) + `"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "2026-11-02.jsonl"), []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var bad []string
	var err error
	go func() {
		defer close(done)
		_, bad, err = NewAudit(skills).Read(time.Time{}, "")
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("reading the audit log blocked on a linked FIFO")
	}
	if err == nil && len(bad) < 1 {
		t.Errorf("Read = %v, bad %v: want the link refused or reported", err, bad)
	}
	if !slices.ContainsFunc(bad, func(b string) bool {
		return strings.Contains(b, "2026-11-02.jsonl") && strings.Contains(b, "rest of the file is skipped")
	}) {
		t.Errorf("the over-long line is not reported: %v", bad)
	}
}

// TestAuditAppendRefusesAHardLink: a day's file that is a hard link to a
// file elsewhere is refused, naming it, and that file does not grow.
func TestAuditAppendRefusesAHardLink(t *testing.T) {
	t.Parallel()
	skills := t.TempDir()
	dir := filepath.Join(skills, AuditDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("victim\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "windows" {
		t.Skip("the link count is not told here")
	}
	day := filepath.Join(dir, "2026-11-03.jsonl")
	if err := os.Link(victim, day); err != nil {
		t.Skip(err)
	}
	err := NewAudit(skills).Append(Event{TS: time.Date(2026, 11, 3, 12, 0, 0, 0, time.UTC), Op: "archive", Target: "x"})
	if err == nil || !strings.Contains(err.Error(), day) {
		t.Errorf("Append into a hard link = %v, want a refusal naming %s", err, day)
	}
	if data, _ := os.ReadFile(victim); string(data) != "victim\n" {
		t.Errorf("the hard link's other name became %q", data)
	}
}
