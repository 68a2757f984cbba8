package platform

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// resolve opens the folder rel below the tree with one openat2 that
// follows no link (RESOLVE_NO_SYMLINKS) and cannot leave the tree
// (RESOLVE_BENEATH); where the kernel has no openat2 (before 5.6, or a
// sandbox that filters it) it walks one component at a time. Any other
// failure walks too, for an error that names the component.
func (t *Tree) resolve(rel string) (int, error) {
	if !t.plain.Load() {
		fd, err := unix.Openat2(t.fd, rel, &unix.OpenHow{
			Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
		})
		if err == nil {
			return fd, nil
		}
		if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.E2BIG) {
			t.plain.Store(true)
		}
	}
	return t.walk(rel)
}

// Exchange swaps a and b, both below the tree, in one step
// (renameat2(RENAME_EXCHANGE)); a file system without it gives
// ErrNoExchange.
func (t *Tree) Exchange(a, b string) error {
	err := t.twoAt("exchange", a, b, func(afd int, ab string, bfd int, bb string) error {
		return unix.Renameat2(afd, ab, bfd, bb, unix.RENAME_EXCHANGE)
	})
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return &os.LinkError{Op: "exchange", Old: t.full(a), New: t.full(b), Err: ErrNoExchange}
	}
	return err
}
