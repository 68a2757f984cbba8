package daemon_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/skillsync/skillsync/daemon"
	"github.com/skillsync/skillsync/repository"
	dirsource "github.com/skillsync/skillsync/repository/dir"
)

func TestSourcesListsOnlyThoseThatListen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	broken := errors.New("the connection string cannot be read")
	var logged []bool
	src := daemon.Sources{Names: []string{"local", "db"}, Open: func(name string, logf func(string, ...any)) (repository.Repository, error) {
		logged = append(logged, logf != nil)
		if name == "db" {
			return nil, broken
		}
		return dirsource.NewLocal(name, dir, repository.Options{}), nil
	}}
	// A folder does not listen; a source that does not open is kept, so
	// that listening to it says why.
	if got := src.PushSources(); !slices.Equal(got, []string{"db"}) {
		t.Errorf("PushSources = %v, want [db]", got)
	}
	if l, err := src.OpenListener("local", func(string) {}); l != nil || err != nil {
		t.Errorf("OpenListener(local) = %v, %v; want nil, nil for a source that cannot listen", l, err)
	}
	if _, err := src.OpenListener("db", func(string) {}); !errors.Is(err, broken) {
		t.Errorf("OpenListener(db) = %v, want the open's error", err)
	}
	if !slices.Equal(logged, []bool{false, false, true, true}) {
		t.Errorf("logf given = %v, want only when opening a listener", logged)
	}
}
