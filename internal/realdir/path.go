package realdir

import (
	"os"
	"path/filepath"
)

// Path is p with its links followed as far as they exist, so that two
// paths to one folder compare equal even before the folder is made.
func Path(p string) string {
	p = filepath.Clean(p)
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	dir, base := filepath.Split(p)
	if dir == "" || filepath.Clean(dir) == p {
		return p
	}
	return filepath.Join(Path(dir), base)
}

// Same reports whether a and b name one existing folder: the same path,
// or two the file system resolves to one directory (a link on the way, a
// name in another case where case is folded).
func Same(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
