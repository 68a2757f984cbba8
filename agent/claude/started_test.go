package claude

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The folders a project folder's name may stand for are the ones that
// exist: "-" stands for "/", "." and more.
func TestFoldersNamed(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, d := range []string{"sub/x", "sub.x", "a-b/c", "a/b/c", "plain"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "plain"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rest string
		want []string
	}{
		{"-sub-x", []string{"sub.x", "sub/x"}},
		{"-a-b-c", []string{"a-b/c", "a/b/c"}},
		{"-plain", []string{"plain"}},
		{"-link", nil},
		{"-nothing", nil},
		{"", nil},
	} {
		var got []string
		for _, d := range foldersNamed(root, tc.rest, maxStartDepth) {
			rel, _ := filepath.Rel(root, d)
			got = append(got, filepath.ToSlash(rel))
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("foldersNamed(%q) = %q, want %q", tc.rest, got, tc.want)
		}
	}
}
