package repository_test

import (
	"context"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/repository/repositorytest"
)

// writeTree writes files below dir.
func writeTree(t *testing.T, dir string, files map[string]repositorytest.File) {
	t.Helper()
	for name, f := range files {
		mode := f.Mode
		if mode == 0 {
			mode = 0o644
		}
		skilltest.WriteFileMode(t, filepath.Join(dir, filepath.FromSlash(name)), f.Data, mode)
	}
}

func TestLocalConformance(t *testing.T) {
	t.Parallel()
	repositorytest.Run(t, func(t *testing.T, files map[string]repositorytest.File, opts repository.Options) repository.Repository {
		dir := t.TempDir()
		writeTree(t, dir, files)
		r := repository.NewLocal("local", dir, opts)
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
		r := repository.NewEmbedded("builtin", fsys, opts)
		if _, err := r.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
		return r
	}, true)
}

func TestLocalMissingDirIsEmpty(t *testing.T) {
	t.Parallel()
	r := repository.NewLocal("ws", filepath.Join(t.TempDir(), "nope"), repository.Options{})
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
	dir := t.TempDir()
	writeTree(t, dir, repositorytest.Fixture())
	r := repository.NewLocal("l", dir, repository.Options{})
	a, _ := r.Sync(ctx)
	b, _ := r.Sync(ctx)
	if a == "" || a != b {
		t.Fatalf("revision not stable: %q %q", a, b)
	}
	writeTree(t, dir, map[string]repositorytest.File{"pdf/new.txt": {Data: "new"}})
	if c, _ := r.Sync(ctx); c == a {
		t.Error("revision did not change when a file was added")
	}
}
