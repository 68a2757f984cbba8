// Package lock reads and writes skillsync.lock: the revision of every
// source and the hash of every skill, so every host syncs the same bytes.
// The file is JSON, its keys sorted; it is untrusted input like every
// file in a workspace, so every name in it is checked before use.
package lock

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/skillsync/skillsync/internal/termtext"
	"github.com/skillsync/skillsync/materialize"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/internal/jsonfile"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// Version is the format version of skillsync.lock. Version 1 holds skill
// hashes of the first kind (internal/skillhash), which cannot be checked
// against today's without the skills' files: it is read, a sync writes
// version 2 in its place, and a sync --frozen refuses it (Legacy).
const Version = 2

// File is the content of skillsync.lock.
type File struct {
	Version int                `json:"version"`
	Sources map[string]*Source `json:"sources"`
	// kinds are the kinds of source a type may name, as Read was given
	// them; without them a type need only be a plain name.
	kinds *repository.Registry
}

// Source pins one source.
type Source struct {
	Type     repository.Kind   `json:"type"`
	URL      string            `json:"url,omitempty"`
	Ref      string            `json:"ref,omitempty"`
	Revision string            `json:"revision"`
	Skills   map[string]string `json:"skills"`
}

// New returns an empty lock.
func New() *File { return &File{Version: Version, Sources: map[string]*Source{}} }

// Read reads the lock file at name; ok is false when there is none. The
// file is opened without following a link, bounded in size and checked
// (Validate) before any name in it is used; one that fails is an error
// naming the file and the fix.
func Read(name string, kinds *repository.Registry) (f *File, ok bool, err error) {
	f = New()
	f.kinds = kinds
	err = jsonfile.Read(name, f)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return New(), false, nil
	case errors.Is(err, jsonfile.ErrCorrupt):
		return nil, false, fmt.Errorf("%w; it is not used: delete it and run skillsync sync to write a new one", err)
	case err != nil:
		return nil, false, err
	}
	if f.Sources == nil {
		f.Sources = map[string]*Source{}
	}
	return f, true, nil
}

// Same reports whether f and g say the same: their version and every
// source's pins. What Read keeps for checking (the kinds) is no part of
// it, so a lock read from disk is the same as the one a sync computes.
func (f *File) Same(g *File) bool {
	if f.Version != g.Version {
		return false
	}
	return maps.EqualFunc(f.Sources, g.Sources, func(a, b *Source) bool {
		if a == nil || b == nil || a == b {
			return a == b
		}
		return a.Type == b.Type && a.URL == b.URL && a.Ref == b.Ref && a.Revision == b.Revision && maps.Equal(a.Skills, b.Skills)
	})
}

// Validate refuses a lock of a version this build does not read and one
// naming anything but one safe path component.
func (f *File) Validate() error {
	if f.Version != Version && f.Version != 1 {
		return fmt.Errorf("version %d, this skillsync reads 1 and %d", f.Version, Version)
	}
	return f.check()
}

// Legacy reports a lock of version 1, whose skill hashes are of the
// first kind: no skill of today compares equal to them.
func (f *File) Legacy() bool { return f.Version == 1 }

// check refuses names that are not one safe path component, and text
// that is not what skillsync writes: a kind it does not know, a URL or a
// revision with a control character, a skill hash that is not SHA-256 in
// hex. A lock is committed and shared; what it says is printed.
func (f *File) check() error {
	for name, s := range f.Sources {
		if !skill.ValidName(name) {
			return fmt.Errorf("source %q is not one safe path component", name)
		}
		if s == nil {
			return fmt.Errorf("source %q has no record", name)
		}
		if _, known := f.kinds.Lookup(s.Type); !known && (f.kinds != nil || !skill.ValidName(string(s.Type))) {
			return fmt.Errorf("source %s: type %q is not a kind of source", name, s.Type)
		}
		for _, field := range []string{s.URL, s.Ref, s.Revision} {
			if len(field) > 4096 || strings.IndexFunc(field, termtext.Unsafe) >= 0 {
				return fmt.Errorf("source %s: a url, ref or revision holds a control character or is too long", name)
			}
		}
		for sk, hash := range s.Skills {
			if !skill.ValidName(sk) {
				return fmt.Errorf("source %s: skill %q is not one safe path component", name, sk)
			}
			if _, err := materialize.ParseHash(hash); err != nil {
				return fmt.Errorf("source %s: skill %s: hash %q is not SHA-256 in hex", name, sk, hash)
			}
		}
	}
	return nil
}

// Write saves the lock at name when it differs from the file.
func (f *File) Write(name string) error {
	return atomicfile.WriteJSONIfChanged(name, f, 0o644)
}

// Describe returns a configured source as the lock records it, with no
// revision and no skills yet. No credential is ever recorded, and a path
// is recorded relative to base (the config's folder), so the lock means
// the same on every checkout.
func Describe(s config.Source, base string) *Source {
	ls := &Source{Type: s.Kind, Skills: map[string]string{}}
	if l, ok := s.Settings.(repository.Locator); ok {
		ls.URL, ls.Ref = l.Location(base)
	}
	return ls
}

// Compare lists how the configured sources differ from the lock's, one
// line each: + in the config only, - in the lock only, ~ changed. base is
// the config's folder, as for Describe.
func (f *File) Compare(sources []config.Source, base string) []string {
	var diff []string
	seen := map[string]bool{}
	for _, s := range sources {
		seen[s.Name] = true
		want := Describe(s, base)
		got, ok := f.Sources[s.Name]
		switch {
		case !ok:
			diff = append(diff, fmt.Sprintf("+ source %s (%s %s) is in the config, not in the lock", s.Name, want.Type, want.URL))
		case got.Type != want.Type || got.URL != want.URL || got.Ref != want.Ref:
			diff = append(diff, fmt.Sprintf("~ source %s: lock has %s %s ref %q, config has %s %s ref %q",
				s.Name, got.Type, got.URL, got.Ref, want.Type, want.URL, want.Ref))
		}
	}
	var gone []string
	for name := range f.Sources {
		if !seen[name] {
			gone = append(gone, name)
		}
	}
	sort.Strings(gone)
	for _, name := range gone {
		diff = append(diff, fmt.Sprintf("- source %s is in the lock, not in the config", name))
	}
	return diff
}

// Rename is a source the config names anew at a location the lock has
// under another name.
type Rename struct{ From, To string }

// Renamed returns, for each of sources the lock does not name, the
// source the lock has at the same location (type, URL and ref) that
// sources no longer name: a source renamed in the config, whose skills'
// usage, pins and archive states are kept under the old name. They are
// sorted by the new name.
func (f *File) Renamed(sources []config.Source, base string) []Rename {
	if f == nil {
		return nil
	}
	named := map[string]bool{}
	for _, s := range sources {
		named[s.Name] = true
	}
	var out []Rename
	for _, s := range sources {
		if _, ok := f.Sources[s.Name]; ok {
			continue
		}
		want := Describe(s, base)
		for _, old := range slices.Sorted(maps.Keys(f.Sources)) {
			if got := f.Sources[old]; !named[old] && got.Type == want.Type && got.URL == want.URL && got.Ref == want.Ref {
				out = append(out, Rename{From: old, To: s.Name})
			}
		}
	}
	return out
}
