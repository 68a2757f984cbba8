package git

import (
	"path/filepath"
	"testing"
)

// TestLocalRemote: a relative local path is the config folder's, and
// one beginning ~/ the home folder's; a URL, an absolute path or an
// scp-like host:path is left as written.
func TestLocalRemote(t *testing.T) {
	home := t.TempDir() // ~ is the process's home, as in a dir: entry
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home)
	base := filepath.FromSlash("/ws/proj")
	for url, want := range map[string]string{
		"~/skills.git":             filepath.Join(home, "skills.git"),
		"../repo":                  filepath.Join(base, "../repo"),
		"repo.git":                 filepath.Join(base, "repo.git"),
		"./a/b":                    filepath.Join(base, "a/b"),
		"/abs/repo":                "",
		"file:///abs/repo":         "",
		"https://example.com/r":    "",
		"git@github.com:acme/x":    "",
		"host:path/x":              "",
		"ssh://git@host:22/acme/x": "",
		"":                         "",
	} {
		if got := localRemote(base, url); got != want {
			t.Errorf("localRemote(%q) = %q, want %q", url, got, want)
		}
	}
}
