package jsonfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type rec struct {
	Version int               `json:"version"`
	Names   map[string]string `json:"names"`
}

func (r *rec) Validate() error {
	if err := CheckVersion(r.Version, 1, 2); err != nil {
		return err
	}
	for n := range r.Names {
		if strings.Contains(n, "/") {
			return fmt.Errorf("name %q has a slash", n)
		}
	}
	return nil
}

func TestReadRefusesWhatCannotBeTrusted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "outside.json")
	if err := os.WriteFile(outside, []byte(`{"version":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path    string
		corrupt bool
	}{
		{write("ok.json", `{"version":2,"names":{"a":"b"}}`), false},
		{write("bad.json", `{"version":`), true},
		{write("newer.json", `{"version":3}`), true},
		{write("hostile.json", `{"version":1,"names":{"../x":""}}`), true},
		{link, true},
		{dir, true},
	} {
		var r rec
		err := Read(tc.path, &r)
		if got := errors.Is(err, ErrCorrupt); got != tc.corrupt {
			t.Errorf("%s: %v, corrupt %v, want %v", filepath.Base(tc.path), err, got, tc.corrupt)
		}
	}
	var r rec
	if err := Read(filepath.Join(dir, "missing.json"), &r); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestSetAsideKeepsEveryCopy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "r.json")
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var names []string
	for i := range 2 {
		if err := os.WriteFile(p, fmt.Appendf(nil, "broken %d", i), 0o644); err != nil {
			t.Fatal(err)
		}
		aside, err := SetAside(p, now)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.Base(aside))
	}
	if names[0] != "r.json.corrupt-20260102T030405Z" || names[1] != "r.json.corrupt-20260102T030405Z-2" {
		t.Errorf("set aside as %v", names)
	}
	if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Error("the corrupt file is still in place")
	}
}

func TestWriteOnlyWhenChanged(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "r.json")
	v := &rec{Version: 1, Names: map[string]string{"b": "2", "a": "1"}}
	if err := Write(p, v, 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(p)
	time.Sleep(10 * time.Millisecond)
	if err := Write(p, v, 0o644); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(p)
	if !os.SameFile(before, after) || !before.ModTime().Equal(after.ModTime()) {
		t.Error("an unchanged record was rewritten")
	}
	var back rec
	if err := Read(p, &back); err != nil || back.Names["a"] != "1" {
		t.Errorf("read back: %+v %v", back, err)
	}
}

func TestIsSetAside(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 10, 2, 3, 0, time.UTC)
	dir := t.TempDir()
	name := filepath.Join(dir, ".manifest.json")
	var made []string
	for range 3 {
		if err := os.WriteFile(name, []byte("{"), 0o644); err != nil {
			t.Fatal(err)
		}
		aside, err := SetAside(name, now)
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, filepath.Base(aside))
	}
	for _, m := range made {
		if !IsSetAside(m, ".manifest.json") {
			t.Errorf("%s, made by SetAside, is not recognised", m)
		}
	}
	for _, other := range []string{
		".manifest.json", ".manifest.json.corrupt-", ".manifest.json.corrupt-yesterday",
		".manifest.json.corrupt-20261201T100203Z-x", ".manifest.json.corrupt-20261201T100203Zjunk",
		".usage.json.corrupt-20261201T100203Z", "team",
	} {
		if IsSetAside(other, ".manifest.json") {
			t.Errorf("%s is taken for a set-aside manifest", other)
		}
	}
}

// fastRec decodes itself where the file is exactly "fast", and counts
// the tries.
type fastRec struct {
	rec
	tries int
}

func (r *fastRec) DecodeFast(data []byte) bool {
	r.tries++
	if string(data) != "fast" {
		return false
	}
	r.Version, r.Names = 2, map[string]string{"a/b": "x"}
	return true
}

// A FastRecord decodes itself where it can, encoding/json decodes what
// it gives up on, and Validate checks the result either way.
func TestReadTriesTheFastDecoderFirst(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	slow := filepath.Join(dir, "slow.json")
	if err := os.WriteFile(slow, []byte(`{"version": 1, "names": {"a": "b"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var r fastRec
	if err := Read(slow, &r); err != nil || r.tries != 1 || r.Version != 1 || r.Names["a"] != "b" {
		t.Fatalf("Read of what the fast decoder gives up on: %v, tries %d, %+v", err, r.tries, r.rec)
	}
	fast := filepath.Join(dir, "fast.json")
	if err := os.WriteFile(fast, []byte("fast"), 0o644); err != nil {
		t.Fatal(err)
	}
	var f fastRec
	err := Read(fast, &f)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), `"a/b" has a slash`) || f.tries != 1 {
		t.Fatalf("Read of what the fast decoder took: %v, tries %d; want Validate's refusal", err, f.tries)
	}
}
