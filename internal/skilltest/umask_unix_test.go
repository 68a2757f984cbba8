//go:build unix

package skilltest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteFileModeIgnoresUmask: the mode asked for is the mode the file
// has, whatever the umask and whatever mode the file had before.
func TestWriteFileModeIgnoresUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	p := filepath.Join(t.TempDir(), "a", "b", "f")
	WriteFileMode(t, p, "x", 0o600)
	WriteFileMode(t, p, "y", 0o755)
	info, err := os.Stat(p)
	if err != nil || info.Mode().Perm() != 0o755 || ReadFile(t, p) != "y" {
		t.Errorf("after two writes: %v, %v", info, err)
	}
}
