package platform

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// Exchange has no one-step form on Windows: it always gives
// ErrNoExchange, and the caller renames twice (see materialize).
func Exchange(a, b string) error {
	return &os.LinkError{Op: "exchange", Old: a, New: b, Err: ErrNoExchange}
}

// RenameNoReplace renames from to to with MoveFileEx without
// MOVEFILE_REPLACE_EXISTING, which fails when to exists; the error then
// wraps fs.ErrExist.
func RenameNoReplace(from, to string) error {
	f, err := windows.UTF16PtrFromString(from)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	t, err := windows.UTF16PtrFromString(to)
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
