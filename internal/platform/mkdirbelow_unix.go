//go:build unix

package platform

// MkdirBelow makes dir, and each missing folder between root and it, one
// component at a time by descriptor: each folder is opened beneath the
// one above it without following a link (openat with O_NOFOLLOW), and a
// missing one is made there (mkdirat), so a folder swapped for a link
// at any moment is met as that link and refused, never written through.
// rel is dir's path below root, at least one component. The error of a
// link met wraps ErrLinkOnPath and names it.
func MkdirBelow(root string, rel []string, perm uint32) error {
	t, err := MkdirTree(root, rel, perm)
	if err != nil {
		return err
	}
	return t.Close()
}
