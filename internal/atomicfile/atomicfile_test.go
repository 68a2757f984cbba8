package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileReplacesAndCleansUp(t *testing.T) {
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
	name := filepath.Join(t.TempDir(), "f.json")
	if err := WriteJSON(name, map[string]int{"b": 2, "a": 1}, 0o644); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(name)
	if string(data) != "{\n  \"a\": 1,\n  \"b\": 2\n}\n" {
		t.Errorf("got %q", data)
	}
}
