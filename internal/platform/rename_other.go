//go:build !linux && !darwin && !windows

package platform

import "os"

// Exchange: this system has no call skillsync knows for a one-step
// exchange.
func Exchange(a, b string) error {
	return &os.LinkError{Op: "exchange", Old: a, New: b, Err: ErrNoExchange}
}

// RenameNoReplace renames from to to without replacing what is there,
// by RenameNoReplaceByLink.
func RenameNoReplace(from, to string) error { return RenameNoReplaceByLink(from, to) }
