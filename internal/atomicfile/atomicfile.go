// Package atomicfile writes the files skillsync keeps in a workspace
// without ever following a symbolic link someone planted there. Replaced
// files are written so that a reader sees the old content or the new,
// never a mix: a temporary file in the same directory, fsync, rename over
// the target, fsync the directory.
package atomicfile

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillsync/skillsync/internal/platform"
)

// ErrSymlink is wrapped by the errors for a path that is a symbolic link
// where skillsync writes: such a path is refused, never followed.
var ErrSymlink = errors.New("is a symbolic link; skillsync does not write through links")

// WriteFile replaces name with data atomically. A symbolic link at name is
// refused. On any error the target is untouched and the temporary file is
// removed. Once name is written, the temporary files of name that a
// writer killed before its rename left are removed too (Sweep, those
// LeftoverAge old).
func WriteFile(name string, data []byte, perm os.FileMode) error {
	if err := WriteFileOnly(name, data, perm); err != nil {
		return err
	}
	Sweep(filepath.Dir(name), LeftoverAge, filepath.Base(name))
	return nil
}

// tempPrefix is how the temporary files of name begin.
func tempPrefix(name string) string { return "." + filepath.Base(name) + ".tmp-" }

// LeftoverAge is how old a temporary file must be for a sweep that runs
// beside live writers to take it for one a killed writer left: a live
// write takes milliseconds.
const LeftoverAge = 10 * time.Minute

// Sweep removes the temporary files that writers of names (files of dir)
// killed before their rename left (".<name>.tmp-<random>"), those last
// changed olderThan or more ago: 0 when the caller holds the lock every
// writer of names takes. Nothing else is touched; a file that cannot be
// removed waits for the next sweep.
func Sweep(dir string, olderThan time.Duration, names ...string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	now := time.Now()
	for _, e := range entries {
		if !e.Type().IsRegular() || !isTemp(e.Name(), names) {
			continue
		}
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) >= olderThan {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// isTemp reports whether entry is a temporary file of one of names.
func isTemp(entry string, names []string) bool {
	for _, n := range names {
		if p := tempPrefix(n); len(entry) > len(p) && strings.HasPrefix(entry, p) {
			return true
		}
	}
	return false
}

// WriteFileOnly is WriteFile without the sweep, for a folder of many
// files whose leftovers its owner removes otherwise.
func WriteFileOnly(name string, data []byte, perm os.FileMode) (err error) {
	if info, err := os.Lstat(name); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("write %s: %w", name, ErrSymlink)
	}
	dir := filepath.Dir(name)
	f, _, err := CreateTemp(platform.OpenFile, name)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = Fill(f, name, data, perm); err != nil {
		return err
	}
	// rename replaces whatever is at name, a link included, and never
	// writes through it.
	if err = os.Rename(f.Name(), name); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return SyncDir(dir)
}

// CreateTemp makes a new file beside name, by open (a caller's way of
// opening a path: by path, or below a folder it holds), exclusively (a
// name taken, a link included, is passed over), named as the sweeps know
// atomicfile's temporary files: ".<name>.tmp-<random>". tmp is the name
// open was given.
func CreateTemp(open func(name string, flag int, perm fs.FileMode) (*os.File, error), name string) (f *os.File, tmp string, err error) {
	prefix := filepath.Join(filepath.Dir(name), tempPrefix(name))
	for range 100 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		tmp = prefix + hex.EncodeToString(b[:])
		f, err = open(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			return f, tmp, err
		}
	}
	return nil, "", fmt.Errorf("no free temporary name in %s", filepath.Dir(name))
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
	return writeJSONIfChanged(name, v, perm, WriteFile)
}

// WriteJSONIfChangedOnly is WriteJSONIfChanged without the sweep, for a
// file whose leftovers its writer sweeps otherwise (WriteFileOnly).
func WriteJSONIfChangedOnly(name string, v any, perm os.FileMode) error {
	return writeJSONIfChanged(name, v, perm, WriteFileOnly)
}

func writeJSONIfChanged(name string, v any, perm os.FileMode, write func(string, []byte, os.FileMode) error) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	data = append(data, '\n')
	if same(name, data) {
		return nil
	}
	return write(name, data, perm)
}

// same reports whether the regular file name holds exactly data.
func same(name string, data []byte) bool {
	f, err := platform.OpenFile(name, os.O_RDONLY, 0)
	return err == nil && holds(f, data)
}

// holds reports whether f is a regular file whose content is data. It
// closes f.
func holds(f *os.File, data []byte) bool {
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || info.Size() != int64(len(data)) {
		return false
	}
	cur, err := io.ReadAll(io.LimitReader(f, int64(len(data))+1))
	return err == nil && bytes.Equal(cur, data)
}

// OpenAppend opens path for appending, creating it with perm when
// missing. Neither path nor its parent directory may be a symbolic link,
// and path must be a regular file: otherwise it is refused with an error
// naming it. The parent is opened first and the file beneath it, so a
// link swapped in between is refused too.
func OpenAppend(path string, perm os.FileMode) (*os.File, error) {
	dir := filepath.Dir(path)
	d, err := platform.OpenDir(dir)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, refusal(dir, err))
	}
	defer d.Close()
	f, err := d.OpenFile(filepath.Base(path), os.O_WRONLY|os.O_APPEND|os.O_CREATE, perm)
	if err != nil {
		return nil, refusal(path, err)
	}
	if err := regular(f); err != nil {
		f.Close()
		return nil, err
	}
	if err := oneName(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// OneName refuses the file at path, whose stat is info, when it has
// other names (hard links) where the system tells: what is appended to it
// would be appended to each of them, and a hard link can name a file its
// planter may not write (as root, where the system allows links to
// others' files). The error names path and the fix.
func OneName(path string, info fs.FileInfo) error {
	if n, ok := platform.Links(info); ok && n > 1 {
		return fmt.Errorf("%s has %d names (hard links); skillsync appends only to a file of one: replace it with a copy of itself (cp %s %s.new && mv %s.new %s)", path, n, path, path, path, path)
	}
	return nil
}

// oneName is OneName for an open file.
func oneName(f *os.File) error {
	info, err := f.Stat()
	if err != nil {
		return err
	}
	return OneName(f.Name(), info)
}

// MkdirNoFollow makes path a directory, creating it and missing parents
// with perm. A symbolic link at path, or anything that is not a
// directory, is refused with an error naming it, never followed or
// removed. The parents are not checked: they are the caller's.
func MkdirNoFollow(path string, perm os.FileMode) error {
	err := os.Mkdir(path, perm)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), perm); err != nil {
			return fmt.Errorf("create %s: %w", path, err)
		}
		err = os.Mkdir(path, perm)
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", path, err)
	}
	info, err := os.Lstat(path)
	switch {
	case err != nil:
		return fmt.Errorf("create %s: %w", path, err)
	case info.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("directory %s %w", path, ErrSymlink)
	case !info.IsDir():
		return fmt.Errorf("%s is not a directory", path)
	}
	return nil
}

// refusal names what an open of path refused: a link the no-follow open
// met is ErrSymlink.
func refusal(path string, err error) error {
	if errors.Is(err, platform.ErrLink) {
		return fmt.Errorf("%s %w", path, ErrSymlink)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	return &fs.PathError{Op: "open", Path: path, Err: err}
}

// regular refuses an open file that is not a regular file (a FIFO, a
// device) planted where skillsync keeps one.
func regular(f *os.File) error {
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s)", f.Name(), info.Mode().Type())
	}
	return nil
}

// OpenNoFollow opens path with flag (os.O_RDWR|os.O_CREATE, ...) without
// following a symbolic link at path: a link is refused with an error
// wrapping ErrSymlink and naming path, and so is anything that is not a
// regular file.
func OpenNoFollow(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := platform.OpenFile(path, flag, perm)
	if err != nil {
		return nil, refusal(path, err)
	}
	if err := regular(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// SyncDir fsyncs a directory, making the renames in it durable, where the
// system can (platform.SyncDir: Windows cannot).
func SyncDir(dir string) error { return platform.SyncDir(dir) }

// Fill writes data to f, the temporary file of name, gives it perm,
// flushes it to the disk and closes it: what a rename may then put in
// place whole. On an error the caller closes f (again, where its close
// was what failed: a second close changes nothing) and removes it.
func Fill(f *os.File, name string, data []byte, perm fs.FileMode) error {
	return fill(f, name, data, perm, true)
}

// FillUnflushed is Fill without the flush, for a caller that flushes the
// whole file system (a syncfs) before anything depends on the file.
func FillUnflushed(f *os.File, name string, data []byte, perm fs.FileMode) error {
	return fill(f, name, data, perm, false)
}

func fill(f *os.File, name string, data []byte, perm fs.FileMode, flush bool) error {
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if !flush {
		return f.Close()
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %s: fsync: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}
