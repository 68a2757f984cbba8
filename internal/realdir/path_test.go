package realdir

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPathAndSame: a folder reached through a link, made or not yet, has
// one real path, and two paths to it are the same folder.
func TestPathAndSame(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	real := filepath.Join(root, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	realReal := Path(real)
	for _, tc := range []struct{ in, want string }{
		{link, realReal},
		{link + string(filepath.Separator), realReal},
		{filepath.Join(link, "not", "yet"), filepath.Join(realReal, "not", "yet")},
		{filepath.Join(root, "gone", "x"), filepath.Join(Path(root), "gone", "x")},
	} {
		if got := Path(tc.in); got != tc.want {
			t.Errorf("Path(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if !Same(link, real) || !Same(real, real+string(filepath.Separator)) || Same(real, root) || Same(filepath.Join(root, "gone"), real) {
		t.Error("Same tells the folders apart wrongly")
	}
}
