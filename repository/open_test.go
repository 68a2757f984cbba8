package repository_test

import (
	"context"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/repository"
	dirsource "github.com/skillsync/skillsync/repository/dir"
	"github.com/skillsync/skillsync/repository/repositorytest"
)

func TestRegistryRefusesAKindOrAKeyTwice(t *testing.T) {
	t.Parallel()
	if _, err := repository.NewRegistry(dirsource.LocalDriver(), dirsource.LocalDriver()); err == nil {
		t.Error("a kind registered twice was accepted")
	}
	other := dirsource.EmbeddedDriver()
	other.Keys = []string{"dir"}
	if _, err := repository.NewRegistry(dirsource.LocalDriver(), other); err == nil || !strings.Contains(err.Error(), `"dir"`) {
		t.Errorf("a location key of two kinds: %v", err)
	}
	if _, err := repository.NewRegistry(repository.Driver{Kind: "x"}); err == nil {
		t.Error("a driver without keys, settings or Open was accepted")
	}
}

func TestRegistryOpensByKind(t *testing.T) {
	t.Parallel()
	r := repository.MustRegistry(dirsource.LocalDriver(), dirsource.EmbeddedDriver())
	if k := r.KindOfKey("dir"); k != dirsource.KindLocal {
		t.Errorf("KindOfKey(dir) = %q", k)
	}
	if k := r.KindOfKey("git"); k != "" {
		t.Errorf("KindOfKey(git) = %q in a registry without git", k)
	}
	root := t.TempDir()
	repositorytest.WriteTree(t, root, repositorytest.Fixture())
	repo, err := r.Open(repository.Spec{Source: "l", Kind: dirsource.KindLocal, Settings: &dirsource.LocalSettings{Dir: root}})
	if err != nil {
		t.Fatal(err)
	}
	skills, _, err := repo.Skills(context.Background())
	if err != nil || len(skills) == 0 {
		t.Errorf("the opened dir source reads %d skills, %v", len(skills), err)
	}
	_, err = r.Open(repository.Spec{Source: "g", Kind: "git"})
	if err == nil || !strings.Contains(err.Error(), `unknown kind "git"`) || !strings.Contains(err.Error(), "dir, embedded") {
		t.Errorf("an unregistered kind: %v", err)
	}
	_, err = r.Open(repository.Spec{Source: "e", Kind: dirsource.KindEmbedded, Settings: &dirsource.EmbeddedSettings{Name: "nope"}})
	if err == nil || !strings.Contains(err.Error(), `no embedded file system named "nope"`) {
		t.Errorf("an embedded source the program does not have: %v", err)
	}
	_, err = r.Open(repository.Spec{Source: "w", Kind: dirsource.KindLocal, Settings: &dirsource.EmbeddedSettings{}})
	if err == nil {
		t.Error("a dir source opened with the settings of another kind")
	}
}
