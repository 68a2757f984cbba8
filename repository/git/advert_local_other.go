//go:build !unix

package git

// ownedByMe is false where ownership is not read here: git upload-pack
// answers for every local repository.
func ownedByMe(string) bool { return false }
