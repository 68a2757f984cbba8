package dir_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/repository/dir"
	"github.com/skillsync/skillsync/repository/repositorytest"
)

func TestLocalConformance(t *testing.T) {
	t.Parallel()
	repositorytest.Run(t, func(t *testing.T, files map[string]repositorytest.File, opts repository.Options) repository.Repository {
		root := t.TempDir()
		repositorytest.WriteTree(t, root, files)
		r := dir.NewLocal("local", root, opts)
		if _, err := r.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
		return r
	}, true)
}

func TestEmbeddedConformance(t *testing.T) {
	t.Parallel()
	repositorytest.Run(t, func(t *testing.T, files map[string]repositorytest.File, opts repository.Options) repository.Repository {
		fsys := fstest.MapFS{}
		for name, f := range files {
			fsys[name] = &fstest.MapFile{Data: []byte(f.Data), Mode: f.Mode}
		}
		r := dir.NewEmbedded("builtin", fsys, opts)
		if _, err := r.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
		return r
	}, true)
}

func TestLocalMissingDirIsEmpty(t *testing.T) {
	t.Parallel()
	r := dir.NewLocal("ws", filepath.Join(t.TempDir(), "nope"), repository.Options{})
	skills, problems, err := r.Skills(context.Background())
	if err != nil || len(skills) != 0 || len(problems) != 0 {
		t.Fatalf("missing dir: %v %v %v", skills, problems, err)
	}
	if rev, err := r.Sync(context.Background()); err != nil || rev != "" {
		t.Fatalf("Sync of a missing dir = %q, %v", rev, err)
	}
}

func TestRevisionChangesWithContent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := t.TempDir()
	repositorytest.WriteTree(t, root, repositorytest.Fixture())
	r := dir.NewLocal("l", root, repository.Options{})
	a, _ := r.Sync(ctx)
	b, _ := r.Sync(ctx)
	if a == "" || a != b {
		t.Fatalf("revision not stable: %q %q", a, b)
	}
	repositorytest.WriteTree(t, root, map[string]repositorytest.File{"pdf/new.txt": {Data: "new"}})
	if c, _ := r.Sync(ctx); c == a {
		t.Error("revision did not change when a file was added")
	}
}

// TestSourceMissingDirFails: a configured dir: source whose folder is
// gone fails, naming the folder and the fix, where a layer's is empty.
func TestSourceMissingDirFails(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "nope")
	r := dir.NewSource("team", missing, repository.Options{})
	if _, err := r.Sync(context.Background()); err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "set dir:") {
		t.Errorf("Sync of a missing source folder: %v", err)
	}
	if skills, _, err := r.Skills(context.Background()); err == nil || len(skills) != 0 {
		t.Errorf("Skills of a missing source folder: %v, %v", skills, err)
	}
}
