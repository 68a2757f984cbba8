//go:build unix

package platform

// forceWalk makes tr resolve one component at a time, as a kernel
// without openat2 does.
func forceWalk(tr *Tree) { tr.plain.Store(true) }

func renameNoReplaceByLinkIn(tr *Tree, from, to string) error {
	return tr.renameNoReplaceByLink(from, to)
}
