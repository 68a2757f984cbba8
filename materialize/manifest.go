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
	"os"
	"strconv"

	"github.com/skillsync/skillsync/internal/atomicfile"
)

// ManifestVersion is the format version of .manifest.json.
const ManifestVersion = 1

// Manifest records what skillsync wrote into a cache: per source its
// revision, per skill its hash and files.
type Manifest struct {
	Version int                      `json:"version"`
	Sources map[string]*SourceRecord `json:"sources"`
}

// SourceRecord is one source in the manifest.
type SourceRecord struct {
	Revision string                  `json:"revision"`
	Skills   map[string]*SkillRecord `json:"skills"`
	// Excluded are skills of the source deliberately not materialized
	// (archived by the curator), sorted; a change to them is a change of
	// the source even at the same revision.
	Excluded []string `json:"excluded,omitempty"`
}

// SkillRecord is one materialized skill.
type SkillRecord struct {
	// Hash is SkillHash of the skill's files.
	Hash string `json:"hash"`
	// Fingerprint is the source's own identity of the skill's content (a
	// git tree hash), when it has one.
	Fingerprint string                `json:"fingerprint,omitempty"`
	Files       map[string]FileRecord `json:"files"`
}

// FileRecord is one materialized file. Size, Mode and MTime are the stat
// data a sync compares to decide, without reading, that a file is as
// written.
type FileRecord struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	Mode   string `json:"mode"`
	MTime  int64  `json:"mtime_ns"`
}

// perm returns the record's mode bits.
func (r FileRecord) perm() fs.FileMode {
	m, _ := strconv.ParseUint(r.Mode, 8, 32)
	return fs.FileMode(m)
}

func modeString(m fs.FileMode) string { return fmt.Sprintf("%04o", m.Perm()) }

// NewManifest returns an empty manifest.
func NewManifest() *Manifest {
	return &Manifest{Version: ManifestVersion, Sources: map[string]*SourceRecord{}}
}

// LoadManifest reads a manifest. A missing file is an empty manifest. A
// file that does not parse is reported and treated as empty: every cached
// file is then hashed again, nothing is lost.
func LoadManifest(name string) (*Manifest, error) {
	data, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return NewManifest(), nil
	}
	if err != nil {
		return NewManifest(), fmt.Errorf("read manifest: %w", err)
	}
	m := NewManifest()
	if err := json.Unmarshal(data, m); err != nil || m.Version != ManifestVersion {
		if err == nil {
			err = fmt.Errorf("version %d, want %d", m.Version, ManifestVersion)
		}
		return NewManifest(), fmt.Errorf("manifest %s is unreadable (%v); every cached file will be checked again", name, err)
	}
	if m.Sources == nil {
		m.Sources = map[string]*SourceRecord{}
	}
	return m, nil
}

// Save writes the manifest atomically, unless the file already holds
// exactly this: a sync with nothing new writes nothing.
func (m *Manifest) Save(name string) error {
	return atomicfile.WriteJSONIfChanged(name, m, 0o644)
}
