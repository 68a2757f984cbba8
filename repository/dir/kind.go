package dir

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skillsync/skillsync/repository"
)

// The names of the kinds this package holds.
const (
	KindLocal    repository.Kind = "dir"
	KindEmbedded repository.Kind = "embedded"
)

// LocalDriver returns the dir kind: a directory on this machine read in
// place (dir: PATH).
func LocalDriver() repository.Driver {
	return repository.Driver{
		Kind:     KindLocal,
		Keys:     []string{"dir"},
		Usage:    "dir: PATH",
		Settings: func() repository.Settings { return &LocalSettings{} },
		Open: func(sp repository.Spec) (repository.Repository, error) {
			s, ok := sp.Settings.(*LocalSettings)
			if !ok {
				return nil, fmt.Errorf("source %s: the settings of a dir source are %T", sp.Source, sp.Settings)
			}
			return NewSource(sp.Source, s.Dir, sp.Options), nil
		},
	}
}

// LocalSettings are a dir source's keys in the config.
type LocalSettings struct {
	// Dir is the directory; absolute once resolved.
	Dir string
}

// Keys lists the config keys of a dir source.
func (s *LocalSettings) Keys() []repository.Key {
	return []repository.Key{{Name: "dir", Value: &s.Dir}}
}

// Resolve makes the directory absolute from base and names the source
// after it.
func (s *LocalSettings) Resolve(base string) (string, error) {
	if err := repository.Literal(s.Dir); err != nil {
		return "", fmt.Errorf("dir: %w", err)
	}
	s.Dir = repository.AbsPath(base, s.Dir)
	if home, _ := os.UserHomeDir(); filepath.Dir(s.Dir) == s.Dir || s.Dir == home {
		// Discovery would walk every folder below, other users' and
		// /proc's included.
		return "", fmt.Errorf("dir: %s is the file system root or the home folder: name the folder that holds the skills", s.Dir)
	}
	return filepath.Base(s.Dir), nil
}

// Location is the directory relative to base.
func (s *LocalSettings) Location(base string) (url, ref string) {
	if base == "" {
		return filepath.ToSlash(s.Dir), ""
	}
	rel, err := filepath.Rel(base, s.Dir)
	if err != nil {
		return filepath.ToSlash(s.Dir), ""
	}
	return filepath.ToSlash(rel), ""
}

// Directory is the directory read.
func (s *LocalSettings) Directory() string { return s.Dir }

// EmbeddedDriver returns the embedded kind: a file system compiled into
// the program (embedded: NAME), which the program lends in Host.FS.
func EmbeddedDriver() repository.Driver {
	return repository.Driver{
		Kind:     KindEmbedded,
		Keys:     []string{"embedded"},
		Usage:    "embedded: builtin",
		Settings: func() repository.Settings { return &EmbeddedSettings{} },
		Open: func(sp repository.Spec) (repository.Repository, error) {
			s, ok := sp.Settings.(*EmbeddedSettings)
			if !ok {
				return nil, fmt.Errorf("source %s: the settings of an embedded source are %T", sp.Source, sp.Settings)
			}
			fsys, ok := sp.Host.FS[s.Name]
			if !ok || fsys == nil {
				return nil, fmt.Errorf("source %s: no embedded file system named %q (this program has: %s)",
					sp.Source, s.Name, strings.Join(slices.Sorted(maps.Keys(sp.Host.FS)), ", "))
			}
			return NewEmbedded(sp.Source, fsys, sp.Options), nil
		},
	}
}

// EmbeddedSettings are an embedded source's keys in the config.
type EmbeddedSettings struct {
	// Name names the file system ("builtin").
	Name string
}

// Keys lists the config keys of an embedded source.
func (s *EmbeddedSettings) Keys() []repository.Key {
	return []repository.Key{{Name: "embedded", Value: &s.Name}}
}

// Resolve names the source after its file system.
func (s *EmbeddedSettings) Resolve(string) (string, error) { return s.Name, nil }

// Location is the file system's name.
func (s *EmbeddedSettings) Location(string) (url, ref string) { return s.Name, "" }
