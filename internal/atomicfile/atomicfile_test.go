package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/platform"
)

func TestWriteFileReplacesAndCleansUp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := filepath.Join(dir, "f.json")
	if err := WriteJSON(name, map[string]int{"b": 2, "a": 1}, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(name, []byte("new\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(name)
	info, _ := os.Stat(name)
	if string(data) != "new\n" || info.Mode().Perm() != 0o600 {
		t.Errorf("content %q mode %v", data, info.Mode())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
	if err := WriteFile(filepath.Join(dir, "missing", "x"), []byte("x"), 0o644); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}

func TestWriteJSONSortsKeys(t *testing.T) {
	t.Parallel()
	name := filepath.Join(t.TempDir(), "f.json")
	if err := WriteJSON(name, map[string]int{"b": 2, "a": 1}, 0o644); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(name)
	if string(data) != "{\n  \"a\": 1,\n  \"b\": 2\n}\n" {
		t.Errorf("got %q", data)
	}
}

// outsideFile is a file outside dir that planted links point at.
func outsideFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(p, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func refused(t *testing.T, what string, err error, path string) {
	t.Helper()
	if !errors.Is(err, ErrSymlink) || !strings.Contains(err.Error(), path) {
		t.Errorf("%s = %v, want a refusal naming %s", what, err, path)
	}
}

func TestPlantedLinksAreRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := outsideFile(t)
	link := filepath.Join(dir, "usage.json")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	refused(t, "WriteFile", WriteFile(link, []byte("x"), 0o644), link)
	refused(t, "WriteJSONIfChanged", WriteJSONIfChanged(link, 1, 0o644), link)
	f, err := OpenAppend(link, 0o644)
	if err == nil {
		f.Close()
	}
	refused(t, "OpenAppend", err, link)
	f, err = OpenNoFollow(link, os.O_RDWR|os.O_CREATE, 0o644)
	if err == nil {
		f.Close()
	}
	refused(t, "OpenNoFollow", err, link)

	// A linked folder: its files are refused, and so is creating it.
	linkedDir := filepath.Join(dir, ".audit")
	if err := os.Symlink(filepath.Dir(outside), linkedDir); err != nil {
		t.Fatal(err)
	}
	f, err = OpenAppend(filepath.Join(linkedDir, "precious"), 0o644)
	if err == nil {
		f.Close()
	}
	refused(t, "OpenAppend in a linked folder", err, linkedDir)
	refused(t, "MkdirNoFollow", MkdirNoFollow(linkedDir, 0o755), linkedDir)

	if data, _ := os.ReadFile(outside); string(data) != "precious" {
		t.Errorf("the file behind the link became %q", data)
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Error("the planted link was replaced instead of refused")
	}
}

func TestOpenAppendAndMkdir(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := MkdirNoFollow(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := MkdirNoFollow(dir, 0o755); err != nil {
		t.Fatalf("an existing directory: %v", err)
	}
	p := filepath.Join(dir, "log.jsonl")
	for _, line := range []string{"one\n", "two\n"} {
		f, err := OpenAppend(p, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(line); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if data, _ := os.ReadFile(p); string(data) != "one\ntwo\n" {
		t.Errorf("appended %q", data)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := platform.Mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	if f, err := OpenAppend(fifo, 0o644); err == nil {
		f.Close()
		t.Error("a FIFO was opened as a log")
	}
	// A hard link to a file elsewhere: appended to, it would grow there.
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("victim\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "windows" {
		t.Skip("the link count is not told here")
	}
	hard := filepath.Join(dir, "hard.jsonl")
	if err := os.Link(victim, hard); err != nil {
		t.Skip(err)
	}
	if f, err := OpenAppend(hard, 0o644); err == nil || !strings.Contains(err.Error(), hard) {
		if f != nil {
			f.Close()
		}
		t.Errorf("OpenAppend of a hard link = %v, want a refusal naming %s", err, hard)
	}
	if data, _ := os.ReadFile(victim); string(data) != "victim\n" {
		t.Errorf("the hard link's other name became %q", data)
	}
}

// TestWriteFileSweepsLeftovers: the temporary files of the name that a
// killed writer left are removed once they are old; a fresh one (a live
// writer's), another name's, and anything not a regular file stay.
func TestWriteFileSweepsLeftovers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for _, name := range []string{"..usage.json.tmp-old", "..usage.json.tmp-fresh", ".lock.json.tmp-old"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, "old") {
			if err := os.Chtimes(path, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "..usage.json.tmp-dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(dir, "..usage.json.tmp-dir"), old, old); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(filepath.Join(dir, ".usage.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if want := "..usage.json.tmp-dir ..usage.json.tmp-fresh .lock.json.tmp-old .usage.json"; strings.Join(got, " ") != want {
		t.Errorf("after the write: %q, want %q", strings.Join(got, " "), want)
	}
}
