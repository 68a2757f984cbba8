// Package materialize writes skills into a destination directory, the
// cache or an agent's target, so that readers never see a torn file or a
// half-updated skill, unchanged files are never rewritten, and nothing
// outside the destination is touched.
package materialize

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/skillsync/skillsync/internal/jsonfile"
)

// ManifestVersion is the format version of .manifest.json that this
// build writes. It reads version 1 too: a version-1 source has no
// fingerprint, so its next sync looks at it again (and rewrites nothing
// that is unchanged).
const ManifestVersion = 2

// Manifest records what skillsync wrote into a cache: per source its
// revision and configuration fingerprint, per skill its hash, stored
// metadata and files.
type Manifest struct {
	Version int                      `json:"version"`
	Sources map[string]*SourceRecord `json:"sources"`
}

// SourceRecord is one source in the manifest.
type SourceRecord struct {
	Revision string `json:"revision"`
	// Fingerprint is the caller's digest of every config setting that
	// changes what the source yields: a source whose fingerprint changed
	// is not current even at the same revision.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Excluded are skills of the source deliberately not materialized
	// (archived by the curator), sorted; a change to them is a change of
	// the source even at the same revision.
	Excluded []string                `json:"excluded,omitempty"`
	Skills   map[string]*SkillRecord `json:"skills"`
}

// SkillRecord is one materialized skill.
type SkillRecord struct {
	// Hash is the skill hash of its files.
	Hash Hash `json:"hash"`
	// Fingerprint is the source's own identity of the skill's content (a
	// git tree hash), when it has one.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Meta is what the caller stored with the skill (its parsed
	// frontmatter), kept as given: materialize does not read it.
	Meta  json.RawMessage       `json:"meta,omitempty"`
	Files map[string]FileRecord `json:"files"`
}

// FileRecord is one materialized file. Size, Mode and MTime are the stat
// data a sync compares to decide, without reading, that a file is as
// written.
type FileRecord struct {
	SHA256 Hash   `json:"sha256"`
	Size   int64  `json:"size"`
	Mode   string `json:"mode"`
	MTime  int64  `json:"mtime_ns"`
}

// Perm returns the record's mode bits.
func (r FileRecord) Perm() fs.FileMode {
	m, _ := strconv.ParseUint(r.Mode, 8, 32)
	return fs.FileMode(m)
}

func modeString(m fs.FileMode) string { return fmt.Sprintf("%04o", m.Perm()) }

// NewManifest returns an empty manifest.
func NewManifest() *Manifest {
	return &Manifest{Version: ManifestVersion, Sources: map[string]*SourceRecord{}}
}

// Validate reports why a decoded manifest must not be used: a version
// this build does not read, a source or skill name that is not one safe
// path component, or a file path that leaves its skill. A manifest is a
// file in the workspace like any other, so nothing in it is trusted.
func (m *Manifest) Validate() error {
	if err := jsonfile.CheckVersion(m.Version, 1, ManifestVersion); err != nil {
		return err
	}
	for _, source := range sortedNames(m.Sources) {
		rec := m.Sources[source]
		if err := checkName("source", source); err != nil {
			return err
		}
		if rec == nil {
			return fmt.Errorf("source %q has no record", source)
		}
		for _, name := range rec.Excluded {
			if err := checkName("excluded skill", name); err != nil {
				return fmt.Errorf("source %s: %w", source, err)
			}
		}
		for _, name := range sortedNames(rec.Skills) {
			if err := checkName("skill", name); err != nil {
				return fmt.Errorf("source %s: %w", source, err)
			}
			if rec.Skills[name] == nil {
				return fmt.Errorf("source %s skill %s has no record", source, name)
			}
			if err := checkFiles(rec.Skills[name].Files); err != nil {
				return fmt.Errorf("source %s skill %s: %w", source, name, err)
			}
		}
	}
	return nil
}

// checkFiles validates the file records of one skill.
func checkFiles(files map[string]FileRecord) error {
	for _, p := range sortedNames(files) {
		if err := checkFilePath(p); err != nil {
			return err
		}
		if m, err := strconv.ParseUint(files[p].Mode, 8, 32); err != nil || m&^0o777 != 0 {
			return fmt.Errorf("file %s: mode %q is not a permission", p, files[p].Mode)
		}
	}
	return nil
}

// LoadManifest reads a manifest. A missing file is an empty manifest. A
// file that is unreadable or corrupt (see Validate) gives an empty
// manifest and the error; a corrupt one's error wraps
// jsonfile.ErrCorrupt. Every cached file is then hashed again, nothing is
// lost.
func LoadManifest(name string) (*Manifest, error) {
	m := NewManifest()
	err := jsonfile.Read(name, m)
	if errors.Is(err, fs.ErrNotExist) {
		return NewManifest(), nil
	}
	if err != nil {
		return NewManifest(), err
	}
	if m.Sources == nil {
		m.Sources = map[string]*SourceRecord{}
	}
	m.Version = ManifestVersion
	return m, nil
}

// Save writes the manifest atomically, unless the file already holds
// exactly this: a sync with nothing new writes nothing.
func (m *Manifest) Save(name string) error {
	return jsonfile.Write(name, m, 0o644)
}
