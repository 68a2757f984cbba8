//go:build !linux

package materialize

import (
	"io/fs"
	"time"

	"golang.org/x/sys/unix"
)

// exchange puts staged in place of live with two renames; see the Linux
// version for the one-step exchange.
func exchange(staged, live string) (string, error) {
	return exchangeByRenames(staged, live)
}

// syncFS flushes every file system: sync(2), where syncfs(2) is missing.
func syncFS(string) error {
	unix.Sync()
	return nil
}

// changedAt is when info last changed, as far as this system tells
// portably: its mtime.
func changedAt(info fs.FileInfo) time.Time { return info.ModTime() }
