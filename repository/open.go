package repository

import (
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
