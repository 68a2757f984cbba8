// Package materialize writes skills into a destination directory, the
// cache or an agent's target, so that readers never see a torn file or a
// half-updated skill, unchanged files are never rewritten, and nothing
// outside the destination is touched.
package materialize

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/skillsync/skillsync/internal/jsonfile"
)

// ManifestVersion is the format version of .manifest.json that this
// build writes. Version 3 keeps the manifest an index of sources, a few
// hundred bytes each, and each source's skill and file records in files
// of their own (see records.go), so that a sync with nothing new and the
// read commands never decode a record per file. Versions 1 and 2 (every
// record in .manifest.json) are read, and rewritten as version 3 by the
// next sync; a version-1 source has no fingerprint, so that sync looks at
// it again (and rewrites nothing that is unchanged).
const ManifestVersion = 3

// Manifest records what skillsync wrote into a cache: per source its
// revision and configuration fingerprint, per skill its hash, stored
// metadata and files.
type Manifest struct {
	Version int
	Sources map[string]*SourceRecord
	// unmarked is set for a manifest written by a build older than the
	// rule that a run leaves the marker while an exchange's journal
	// remains (writer.commit): its staging may hold a journal without the
	// marker, and the cache is opened by recovering exchanges first.
	unmarked bool
}

// SourceRecord is one source in the manifest.
type SourceRecord struct {
	Revision string
	// Fingerprint is the caller's digest of every config setting that
	// changes what the source yields: a source whose fingerprint changed
	// is not current even at the same revision.
	Fingerprint string
	// Discovery is the caller's digest of the settings that decide what a
	// skill's content is read as (strictness, discovery rules): the skill
	// records stand for reading that content again only under the same
	// Discovery (see Cache.Recorded).
	Discovery string
	// Excluded are skills of the source deliberately not materialized
	// (archived by the curator), sorted; a change to them is a change of
	// the source even at the same revision.
	Excluded []string
	Skills   map[string]*SkillRecord

	// read is the names of Skills as the record file held them, sorted;
	// not those of Skills any more once a skill is added or removed
	// (sortedSkills tells).
	read []string

	// files is how many files the source's skills hold together.
	files int
	// skillsRef and filesRef name the source's record files in the
	// records folder (the SHA-256 of their content); zero when the record
	// changed in memory and is not written yet.
	skillsRef, filesRef Hash
	// filesLoaded is set once every skill's Files is in memory.
	filesLoaded bool
	// filesLost is set when the file records could not be read (for
	// filesErr): the skills' live files are then hashed again, never
	// trusted.
	filesLost bool
	filesErr  error
	// ahead is the reading of the file records that ReadAhead began, if
	// any: loadFiles waits for it instead of reading them again.
	ahead *filesAhead
}

// SkillRecord is one materialized skill.
type SkillRecord struct {
	// Hash is the skill hash of its files.
	Hash Hash
	// Fingerprint is the source's own identity of the skill's content (a
	// git tree hash), when it has one.
	Fingerprint string
	// Meta is what the caller stored with the skill (its parsed
	// frontmatter), kept as given: materialize does not read it.
	Meta []byte
	// files are the skill's files by path (Files). They are nil in a
	// manifest read without them (ReadSkills) and, in Cache.Manifest, for
	// a source the sync did not look at.
	files map[string]FileRecord
	// raw is files as the file records encode them (their count, then
	// each file), kept from the records they were read from: a sync that
	// changes 1% of a source writes the other skills' bytes as they were
	// instead of encoding them again. The files are never changed in
	// place: a new version is a new SkillRecord, without raw.
	raw []byte
	// lazy is set for a record read from the file records: files are
	// decoded from raw, which loadFiles checked whole, at the first call
	// of Files (decode). A 1% sync of 2,000 skills looks at the files of
	// a few dozen; decoding them all took 4 MiB of maps and 6 ms.
	lazy   bool
	decode sync.Once
}

// newSkillRecord returns the record of a skill of these files.
func newSkillRecord(hash Hash, fingerprint string, meta []byte, files map[string]FileRecord) *SkillRecord {
	return &SkillRecord{Hash: hash, Fingerprint: fingerprint, Meta: meta, files: files}
}

// Files returns the skill's files by path. The map is the record's own:
// the caller must not change it.
func (r *SkillRecord) Files() map[string]FileRecord {
	if r.lazy {
		r.decode.Do(func() { r.files = decodeSkillFiles(r.raw) })
	}
	return r.files
}

// withMeta returns a copy of r with meta. The files, decoded or not, are
// r's.
func (r *SkillRecord) withMeta(meta []byte) *SkillRecord {
	c := &SkillRecord{Hash: r.Hash, Fingerprint: r.Fingerprint, Meta: meta, raw: r.raw, lazy: r.lazy}
	if !r.lazy {
		c.files = r.files
	}
	return c
}

// fileCount is len(r.Files()), without decoding a lazy record.
func (r *SkillRecord) fileCount() int {
	if r.lazy {
		n, _ := binary.Uvarint(r.raw)
		return int(n)
	}
	return len(r.files)
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

func modeString(m fs.FileMode) string {
	switch m.Perm() {
	case 0o644:
		return "0644"
	case 0o755:
		return "0755"
	}
	return fmt.Sprintf("%04o", m.Perm())
}

// NewManifest returns an empty manifest.
func NewManifest() *Manifest {
	return &Manifest{Version: ManifestVersion, Sources: map[string]*SourceRecord{}}
}

// Files returns how many files the source's skills hold.
func (r *SourceRecord) Files() int {
	if r.filesLoaded {
		n := 0
		for _, sk := range r.Skills {
			n += sk.fileCount()
		}
		return n
	}
	return r.files
}

// index is .manifest.json as version 3 writes it: one small entry per
// source, naming the files that hold its records.
type index struct {
	Version int                     `json:"version"`
	Sources map[string]*indexSource `json:"sources"`
	// Marked is set by the builds that leave the marker while an
	// exchange's journal remains (Manifest.unmarked). Older builds read
	// the index without it.
	Marked bool `json:"exchanges_marked,omitempty"`
}

type indexSource struct {
	Revision    string   `json:"revision"`
	Fingerprint string   `json:"fingerprint,omitempty"`
	Discovery   string   `json:"discovery,omitempty"`
	Excluded    []string `json:"excluded,omitempty"`
	// Skills and Files count what the records hold.
	Skills int `json:"skills"`
	Files  int `json:"files"`
	// SkillRecords and FileRecords are the SHA-256 of the two record
	// files, which is also their name in the records folder.
	SkillRecords Hash `json:"skill_records"`
	FileRecords  Hash `json:"file_records"`
}

// Validate reports why a decoded index must not be used. The manifest
// is a file in the workspace like any other, so nothing in it is
// trusted: every source name must be one safe path component and every
// record file must be named.
func (x *index) Validate() error {
	if x.Version != ManifestVersion {
		// Older versions are decoded as legacy; this only sees version 3.
		return jsonfile.CheckVersion(x.Version, ManifestVersion)
	}
	for _, source := range sortedNames(x.Sources) {
		rec := x.Sources[source]
		if err := checkName("source", source); err != nil {
			return err
		}
		if rec == nil {
			return fmt.Errorf("source %q has no record", source)
		}
		if err := checkExcluded(source, rec.Excluded); err != nil {
			return err
		}
		if rec.Skills < 0 || rec.Files < 0 {
			return fmt.Errorf("source %s: negative counts", source)
		}
		if rec.SkillRecords.IsZero() || rec.FileRecords.IsZero() {
			return fmt.Errorf("source %s names no record files", source)
		}
	}
	return nil
}

func checkExcluded(source string, names []string) error {
	for _, name := range names {
		if err := checkName("excluded skill", name); err != nil {
			return fmt.Errorf("source %s: %w", source, err)
		}
	}
	return nil
}

// legacy is .manifest.json as versions 1 and 2 wrote it: every record
// of every file in one JSON document.
type legacy struct {
	Version int                      `json:"version"`
	Sources map[string]*legacySource `json:"sources"`
}

type legacySource struct {
	Revision    string                  `json:"revision"`
	Fingerprint string                  `json:"fingerprint,omitempty"`
	Excluded    []string                `json:"excluded,omitempty"`
	Skills      map[string]*legacySkill `json:"skills"`
}

type legacySkill struct {
	Hash        Hash                  `json:"hash"`
	Fingerprint string                `json:"fingerprint,omitempty"`
	Meta        json.RawMessage       `json:"meta,omitempty"`
	Files       map[string]FileRecord `json:"files"`
}

// Validate reports why a decoded version-1 or -2 manifest must not be
// used: a source or skill name that is not one safe path component, or a
// file path that leaves its skill.
func (m *legacy) Validate() error {
	if err := jsonfile.CheckVersion(m.Version, 1, 2); err != nil {
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
		if err := checkExcluded(source, rec.Excluded); err != nil {
			return err
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

// manifestFile is .manifest.json in any version this build reads. The
// file is read once; its version picks the shape it decodes into, and
// only that shape is validated.
type manifestFile struct {
	version int
	index   index  // version 3
	legacy  legacy // versions 1 and 2
}

func (f *manifestFile) UnmarshalJSON(data []byte) error {
	var v struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	f.version = v.Version
	switch v.Version {
	case ManifestVersion:
		return json.Unmarshal(data, &f.index)
	case 1, 2:
		return json.Unmarshal(data, &f.legacy)
	}
	return nil // Validate refuses the version
}

func (f *manifestFile) Validate() error {
	switch f.version {
	case ManifestVersion:
		return f.index.Validate()
	case 1, 2:
		return f.legacy.Validate()
	}
	return jsonfile.CheckVersion(f.version, 1, 2, ManifestVersion)
}

// loadIndex reads the manifest at root: the index of a version-3 file
// (legacy false, no record loaded), or the whole of a version-1 or -2
// file (legacy true, every record loaded). A missing file is an empty
// manifest; an unreadable or corrupt one gives an empty manifest and the
// error, a corrupt one's error wrapping jsonfile.ErrCorrupt.
func loadIndex(root string) (m *Manifest, legacyFile bool, err error) {
	name := filepath.Join(root, manifestName)
	var file manifestFile
	err = jsonfile.Read(name, &file)
	if errors.Is(err, fs.ErrNotExist) {
		return NewManifest(), false, nil
	}
	if err != nil {
		m = NewManifest()
		m.unmarked = true // whatever wrote it, staging is looked at
		return m, false, err
	}
	m = NewManifest()
	m.unmarked = !file.index.Marked // legacy versions never are
	if file.version == ManifestVersion {
		for source, s := range file.index.Sources {
			m.Sources[source] = &SourceRecord{Revision: s.Revision, Fingerprint: s.Fingerprint, Discovery: s.Discovery, Excluded: s.Excluded,
				files: s.Files, skillsRef: s.SkillRecords, filesRef: s.FileRecords}
		}
		return m, false, nil
	}
	for source, s := range file.legacy.Sources {
		rec := &SourceRecord{Revision: s.Revision, Fingerprint: s.Fingerprint, Excluded: s.Excluded,
			Skills: map[string]*SkillRecord{}, filesLoaded: true}
		for name, sk := range s.Skills {
			files := sk.Files
			if files == nil {
				files = map[string]FileRecord{}
			}
			// Its hash is of the first kind (internal/skillhash): today's
			// comes from the file records.
			rec.Skills[name] = newSkillRecord(filesHash(files), sk.Fingerprint, sk.Meta, files)
		}
		m.Sources[source] = rec
	}
	return m, true, nil
}

// saveIndex writes the manifest's index atomically, unless the file
// already holds exactly this. Every source must have its record files
// written (see writeRecords).
func (m *Manifest) saveIndex(d dest, root string) error {
	x := index{Version: ManifestVersion, Sources: map[string]*indexSource{}, Marked: true}
	for source, rec := range m.Sources {
		if rec.skillsRef.IsZero() || rec.filesRef.IsZero() {
			return fmt.Errorf("source %s: its records are not written", source)
		}
		x.Sources[source] = &indexSource{Revision: rec.Revision, Fingerprint: rec.Fingerprint, Discovery: rec.Discovery, Excluded: rec.Excluded,
			Skills: len(rec.Skills), Files: rec.Files(), SkillRecords: rec.skillsRef, FileRecords: rec.filesRef}
	}
	// The lock's holder sweeps its leftovers (OpenCache).
	return d.writeJSON(filepath.Join(root, manifestName), &x, 0o644)
}
