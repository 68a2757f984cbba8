//go:build unix && !linux && !darwin

package platform

import "os"

// Exchange: this system has no call skillsync knows for a one-step
// exchange.
func (t *Tree) Exchange(a, b string) error {
	return &os.LinkError{Op: "exchange", Old: t.full(a), New: t.full(b), Err: ErrNoExchange}
}

// RenameNoReplace renames from to to, both below the tree, without
// replacing what is at to: to's name is claimed first by a link or an
// exclusive mkdir.
func (t *Tree) RenameNoReplace(from, to string) error { return t.renameNoReplaceByLink(from, to) }

// SyncFS flushes what was written, as SyncFS does here.
func (t *Tree) SyncFS(string) error { return SyncFS(t.path) }
