//go:build unix

package rawfile

import (
	"testing"

	"github.com/skillsync/skillsync/internal/testmain"
)

// TestMain runs the tests without the race detector's second of sleep
// at exit (internal/testmain says why).
func TestMain(m *testing.M) { testmain.Main(m) }
