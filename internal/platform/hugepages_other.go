//go:build !linux

package platform

// AdviseHugePages: this system takes no such advice from a program.
func AdviseHugePages([]byte) bool { return false }
