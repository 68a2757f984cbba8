package catalog

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

// TestArchivedIsNotFound: a skill archived out of the cache has no file
// to open, which callers (serve's 404, read) tell by fs.ErrNotExist, and
// the error says how to bring it back.
func TestArchivedIsNotFound(t *testing.T) {
	t.Parallel()
	err := error(archivedError("pdf"))
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "skillsync restore pdf") {
		t.Errorf("%v: not found %v", err, errors.Is(err, fs.ErrNotExist))
	}
}
