//go:build !linux || !(amd64 || arm64)

package startheap

// Undo does nothing here: the heap got no advice.
func Undo() {}

// Collapse does nothing here: no huge pages to collapse into.
func Collapse(uintptr) {}

// Ranged: no range is taken here.
func Ranged() bool { return false }

// Freed: no range here.
func Freed() bool { return false }

// Room: none here.
func Room(int) int { return 0 }

// RangeSize: no range here.
func RangeSize() int { return 0 }
