// Package atomicfile replaces files so that a reader sees the old content
// or the new, never a mix: write a temporary file in the same directory,
// fsync it, rename it over the target, fsync the directory.
package atomicfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile replaces name with data atomically. On any error the target is
// untouched and the temporary file is removed.
func WriteFile(name string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(name)
	f, err := os.CreateTemp(dir, "."+filepath.Base(name)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("write %s: fsync: %w", name, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err = os.Rename(f.Name(), name); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return SyncDir(dir)
}

// WriteJSON writes v as indented JSON with a final newline, atomically.
// Map keys come out sorted, so the same value gives the same bytes.
func WriteJSON(name string, v any, perm os.FileMode) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	return WriteFile(name, append(data, '\n'), perm)
}

// WriteJSONIfChanged writes v as WriteJSON does, unless name already holds
// exactly those bytes: a run that changed nothing writes nothing.
func WriteJSONIfChanged(name string, v any, perm os.FileMode) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	data = append(data, '\n')
	if cur, err := os.ReadFile(name); err == nil && bytes.Equal(cur, data) {
		return nil
	}
	return WriteFile(name, data, perm)
}

// SyncDir fsyncs a directory, making the renames in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}
