package git

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillsync/skillsync/internal/testmain"
)

// TestMain runs the tests as internal/testmain says, with the machine's
// own git config out of the way: a global or system config could hide
// refs from git upload-pack, which the advertisement tests compare with.
// It is set once here, not with t.Setenv, so that those tests run in
// parallel. The tests that need a config of their own (credential
// helpers) give git an environment of their own.
func TestMain(m *testing.M) {
	testmain.Setup()
	dir, err := os.MkdirTemp("", "skillsync-git-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sharedDir = dir
	// A file that does not exist: git reads no config from it.
	os.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(dir, "none"))
	os.Setenv("GIT_CONFIG_SYSTEM", filepath.Join(dir, "none"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
