package platform

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/windows"
)

// SyncFS makes everything written below dir durable. Windows has no
// syncfs and flushing a whole volume needs an administrator, so each
// regular file below dir is flushed (FlushFileBuffers) in turn, but for
// a file with another name: a staged file that is a hard link to a live
// one was made durable when it was written, and opening it for writing
// (as FlushFileBuffers needs) fails while any program holds the live
// file open without sharing writes (.NET's File.OpenRead does), which
// would fail the whole commit.
func SyncFS(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if n, err := linkCount(path); err != nil {
			return fmt.Errorf("flush %s: %w", path, err)
		} else if n > 1 {
			return nil
		}
		f, err := OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return fmt.Errorf("flush %s: %w", path, err)
		}
		defer f.Close()
		if err := f.Sync(); err != nil {
			return fmt.Errorf("flush %s: %w", path, err)
		}
		return nil
	})
}

// ChangeTime is when info last changed as far as Windows tells from a
// stat: its modification time (it keeps no inode change time there).
func ChangeTime(info fs.FileInfo) time.Time { return info.ModTime() }

// FileKey: a Windows stat carries no file index, so ok is false; callers
// fall back to what they do without one.
func FileKey(fs.FileInfo) (dev, ino uint64, ok bool) { return 0, 0, false }

// IsTerminal reports whether f is a console.
func IsTerminal(f *os.File) bool {
	var mode uint32
	return windows.GetConsoleMode(windows.Handle(f.Fd()), &mode) == nil
}

// linkCount is how many names the file at path has, read through a
// handle opened for reading only.
func linkCount(path string) (uint32, error) {
	f, err := OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &info); err != nil {
		return 0, err
	}
	return info.NumberOfLinks, nil
}
