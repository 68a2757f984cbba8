//go:build !linux

package testmain

// ramTemp: only Linux is known to have a tmpfs at a fixed place; the
// tests keep the system's temporary folder.
func ramTemp() string { return "" }
