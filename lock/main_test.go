package lock

import (
	"errors"
	"testing"

	"github.com/skillsync/skillsync/internal/testmain"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/repository/dir"
)

// TestMain runs the tests without the race detector's second of sleep
// at exit (internal/testmain says why).
func TestMain(m *testing.M) { testmain.Main(m) }

// kinds is the registry the tests read locks with: the kinds a lock may
// name. A lock only asks whether a type is a known kind, so git and
// postgres are stand-ins of their names (repository/git's and
// repository/postgres's Kind): the real ones would link the git and
// PostgreSQL clients into this test binary, which opens no source.
func kinds() *repository.Registry {
	stand := func(kind repository.Kind) repository.Driver {
		return repository.Driver{
			Kind: kind, Keys: []string{string(kind)}, Usage: string(kind) + ": LOCATION",
			Settings: func() repository.Settings { return nil },
			Open: func(repository.Spec) (repository.Repository, error) {
				return nil, errors.New("the lock's tests open no source")
			},
		}
	}
	return repository.MustRegistry(dir.EmbeddedDriver(), dir.LocalDriver(), stand("git"), stand("postgres"))
}
