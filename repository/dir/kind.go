package dir

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skillsync/skillsync/internal/editdistance"
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
// names are the file systems the program lends: a config entry naming
// any other is refused as the config loads, rather than at every sync.
// Given none, any name is taken until the source opens (Open then says
// which the program has).
func EmbeddedDriver(names ...string) repository.Driver {
	lent := slices.Clone(names)
	return repository.Driver{
		Kind:     KindEmbedded,
		Keys:     []string{"embedded"},
		Usage:    "embedded: builtin",
		Settings: func() repository.Settings { return &EmbeddedSettings{lent: lent} },
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
	// lent are the names the program lends (EmbeddedDriver's); nil takes
	// any.
	lent []string
}

// Keys lists the config keys of an embedded source.
func (s *EmbeddedSettings) Keys() []repository.Key {
	return []repository.Key{{Name: "embedded", Value: &s.Name}}
}

// Resolve refuses a file system the program does not lend, and names the
// source after its file system.
func (s *EmbeddedSettings) Resolve(string) (string, error) {
	have := cmp.Or(strings.Join(slices.Sorted(slices.Values(s.lent)), ", "), "none")
	switch {
	case s.Name == "" && s.lent == nil:
		return "", errors.New("embedded: is empty: name a skill set compiled into the program, such as builtin")
	case s.Name == "":
		return "", fmt.Errorf("embedded: is empty: name a skill set compiled into this program (it has: %s)", have)
	case s.lent != nil && !slices.Contains(s.lent, s.Name):
		hint := ""
		if near := editdistance.Nearest(s.lent, s.Name, 1, strings.ToLower); len(near) > 0 {
			hint = fmt.Sprintf("; did you mean %s?", near[0])
		}
		return "", fmt.Errorf("embedded: no skill set named %q is compiled into this program%s (it has: %s); name one of those, or read skills of your own with dir: or git:",
			s.Name, hint, have)
	}
	return s.Name, nil
}

// Location is the file system's name.
func (s *EmbeddedSettings) Location(string) (url, ref string) { return s.Name, "" }

// Place is the file system's name: two entries naming one read the same
// skills.
func (s *EmbeddedSettings) Place() (key, what string) { return s.Name, "embedded skill set " + s.Name }
