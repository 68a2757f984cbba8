package repository

import (
	"context"
	"fmt"
	"io/fs"
)

// Kind is what a source is.
type Kind string

// The kinds of source.
const (
	KindEmbedded Kind = "embedded"
	KindDir      Kind = "dir"
	KindGit      Kind = "git"
	KindPostgres Kind = "postgres"
)

// Spec describes one source to open: its name, its kind and the settings
// of that kind.
type Spec struct {
	Source string
	Kind   Kind
	// Git is the remote of a git source; its Source field is set from
	// Spec.Source.
	Git GitConfig
	// Dir is the directory of a dir source.
	Dir string
	// FS is the file system of an embedded source.
	FS fs.FS
	// Postgres is the database of a postgres source; its Source field is
	// set from Spec.Source.
	Postgres PostgresConfig
	Options  Options
}

// Open returns the Repository a Spec describes. It is the one place that
// tells the kinds of source apart; nothing is read until the repository
// is used.
func Open(s Spec) (Repository, error) {
	switch s.Kind {
	case KindGit:
		cfg := s.Git
		cfg.Source = s.Source
		return NewGit(cfg, s.Options), nil
	case KindDir:
		return NewLocal(s.Source, s.Dir, s.Options), nil
	case KindPostgres:
		cfg := s.Postgres
		cfg.Source = s.Source
		return NewPostgres(cfg, s.Options)
	case KindEmbedded:
		if s.FS == nil {
			return nil, fmt.Errorf("source %s: no file system to read", s.Source)
		}
		return NewEmbedded(s.Source, s.FS, s.Options), nil
	}
	return nil, fmt.Errorf("source %s: unknown kind %q", s.Source, s.Kind)
}

// Fetcher is a Repository that reads a local copy of a remote: Fetch
// brings the copy up to date over the network, Current tells the
// revision the copy holds without any network.
type Fetcher interface {
	Repository
	Fetch(ctx context.Context) (FetchResult, error)
	Current(ctx context.Context) (Revision, error)
}

// Fetch brings r's local copy up to date when r is a Fetcher. Any other
// repository has nothing to fetch: its result is empty and Updated false.
func Fetch(ctx context.Context, r Repository) (FetchResult, error) {
	if f, ok := r.(Fetcher); ok {
		return f.Fetch(ctx)
	}
	return FetchResult{}, nil
}

var _ Fetcher = (*Git)(nil)
