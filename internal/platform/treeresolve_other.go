//go:build unix && !linux

package platform

// resolve opens the folder rel below the tree one component at a time,
// never following a link: this system has no openat2.
func (t *Tree) resolve(rel string) (int, error) { return t.walk(rel) }

// openFast: no one-call open here; OpenFile walks.
func (t *Tree) openFast(string, int, uint32) (int, bool) { return -1, false }
