//go:build !unix

package platform

func forceWalk(*Tree) {}

func renameNoReplaceByLinkIn(tr *Tree, from, to string) error {
	return tr.RenameNoReplace(from, to)
}
