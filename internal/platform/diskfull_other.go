//go:build !unix && !windows

package platform

// DiskFull reports whether err says the disk has no room left; this
// system's errors are not told apart.
func DiskFull(error) bool { return false }
