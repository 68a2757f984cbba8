package platform

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// Exchange swaps a and b, both below the tree, in one step
// (renameatx_np(RENAME_SWAP)); a file system without it gives
// ErrNoExchange.
func (t *Tree) Exchange(a, b string) error {
	err := t.twoAt("exchange", a, b, func(afd int, ab string, bfd int, bb string) error {
		return unix.RenameatxNp(afd, ab, bfd, bb, unix.RENAME_SWAP)
	})
	if errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return &os.LinkError{Op: "exchange", Old: t.full(a), New: t.full(b), Err: ErrNoExchange}
	}
	return err
}
