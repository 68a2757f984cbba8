package repositorytest

import (
	"path/filepath"
	"testing"

	"github.com/skillsync/skillsync/internal/skilltest"
)

// WriteTree writes files below dir, each with its mode (0o644 when
// unset): a local source's content, or a git work tree's.
func WriteTree(t *testing.T, dir string, files map[string]File) {
	t.Helper()
	for name, f := range files {
		mode := f.Mode
		if mode == 0 {
			mode = 0o644
		}
		skilltest.WriteFileMode(t, filepath.Join(dir, filepath.FromSlash(name)), f.Data, mode)
	}
}
