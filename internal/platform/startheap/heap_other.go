//go:build !linux || !(amd64 || arm64)

package startheap

// Undo does nothing here: the heap got no advice.
func Undo() {}
