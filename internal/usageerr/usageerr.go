// Package usageerr holds the error of a request that cannot be met as
// asked, shared by the root (skillsync.UsageError), drafts and fleet so
// that the CLI's one exit-code switch knows it whoever returns it.
package usageerr

import "fmt"

// UsageError is a request that cannot be met as asked: an unknown source
// name, a rollout asked for wrongly. It is the caller's to fix.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Errorf is a *UsageError of fmt.Errorf(format, args...).
func Errorf(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}
