//go:build !unix

package platform

// PrivateDir: who may write a directory is not told here, so none is
// taken as private.
func PrivateDir(string) bool { return false }
