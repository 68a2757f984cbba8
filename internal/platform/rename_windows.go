package platform

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// Exchange has no one-step form on Windows: it always gives
// ErrNoExchange, and the caller renames twice (see materialize).
func Exchange(a, b string) error {
	return &os.LinkError{Op: "exchange", Old: a, New: b, Err: ErrNoExchange}
}

// RenameNoReplace renames from to to with MoveFileEx without
// MOVEFILE_REPLACE_EXISTING, which fails when to exists; the error then
// wraps fs.ErrExist. Paths of MAX_PATH or more are given to it in their
// extended form, as os gives its own calls' (extendedPath).
func RenameNoReplace(from, to string) error {
	f, err := windows.UTF16PtrFromString(win32Path(from))
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	t, err := windows.UTF16PtrFromString(win32Path(to))
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	err = windows.MoveFileEx(f, t, 0)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, windows.ERROR_ALREADY_EXISTS) || errors.Is(err, windows.ERROR_FILE_EXISTS) || errors.Is(err, fs.ErrExist):
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: fs.ErrExist}
	}
	return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
}

// win32Path is p as a Win32 call that takes a path should get it: made
// absolute and clean (an extended path has no "." or "..", and no
// forward slashes), in its extended form when long.
func win32Path(p string) string {
	if filepath.IsAbs(p) && len(p) < shortPath {
		return p
	}
	// A short relative path can name a long one: made absolute first.
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return extendedPath(abs)
}
