//go:build unix

package platform

import (
	"errors"
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// MkdirBelow makes dir, and each missing folder between root and it, one
// component at a time by descriptor: each folder is opened beneath the
// one above it without following a link (openat with O_NOFOLLOW), and a
// missing one is made there (mkdirat), so a folder swapped for a link
// at any moment is met as that link and refused, never written through.
// rel is dir's path below root, at least one component. The error of a
// link met wraps ErrLinkOnPath and names it.
func MkdirBelow(root string, rel []string, perm uint32) error {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", root, err)
	}
	at := root
	for _, name := range rel {
		at = filepath.Join(at, name)
		if err := unix.Mkdirat(fd, name, perm); err != nil && !errors.Is(err, unix.EEXIST) {
			unix.Close(fd)
			return fmt.Errorf("create %s: %w", at, err)
		}
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		var st unix.Stat_t
		switch {
		case err == nil:
			fd = next
			continue
		case (errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EMLINK)) &&
			unix.Fstatat(unix.AT_FDCWD, at, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK:
			return fmt.Errorf("%s %w", at, ErrLinkOnPath)
		case errors.Is(err, unix.ENOTDIR):
			return fmt.Errorf("%s is not a directory", at)
		default:
			return fmt.Errorf("open %s: %w", at, err)
		}
	}
	return unix.Close(fd)
}
