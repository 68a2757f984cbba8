package materialize

import (
	"github.com/skillsync/skillsync/internal/binrec"

	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/internal/jsonfile"
)

// The records of each source live in the cache's records folder, two
// files per source, each named by the SHA-256 of its content:
//
//   - <sha256>.skills: per skill (in name order) its name, skill hash,
//     fingerprint and stored metadata. The read commands and a sync with
//     nothing new read this one.
//   - <sha256>.files: per skill (in name order) its files (in path
//     order): path, SHA-256, size, permission bits, mtime in ns. Only a
//     sync that looks at the source, and verify, read this one.
//
// Both are binary: a magic line, then unsigned varints, length-prefixed
// strings and raw 32-byte hashes; decoding them costs a fraction of
// decoding the same records as JSON. A name that is the hash of the
// content lets a reader check what it read, and lets a sync write new
// records beside the old ones and switch to them by rewriting
// .manifest.json, the one file that says which records are current.
// Records that neither the manifest nor the one before it names are
// removed after the switch, so a reader that read the previous manifest
// still finds its records.
const (
	recordsName = ".records"
	skillsMagic = "skillsync skill records 2\n"
	// oldSkillsMagic starts the skill records of skillsync.lock version 1,
	// whose skill hashes were of the first kind (internal/skillhash).
	// They are read, their hashes computed again from the file records,
	// and written anew by the next sync.
	oldSkillsMagic = "skillsync skill records 1\n"
	filesMagic     = "skillsync file records 1\n"
	skillsExt      = ".skills"
	filesExt       = ".files"
	// maxRecordSize bounds a record file as jsonfile.MaxSize bounds a JSON
	// record: decoding a bigger one could exhaust memory.
	maxRecordSize = jsonfile.MaxSize
)

// errRecordGone is a record file the manifest names that is not there: a
// sync replaced it between a reader's read of the manifest and of the
// record. The reader reads the manifest again.
var errRecordGone = errors.New("record file is gone")

// encodeSkills encodes a source's skill records.
func encodeSkills(rec *SourceRecord) []byte {
	names := sortedNames(rec.Skills)
	// Sized to fit, metadata and all: grown by doubling, the buffer of
	// 2,000 skills' records (500 KiB) allocated 2.4 MiB.
	size := 64
	for _, name := range names {
		sk := rec.Skills[name]
		size += 3*binary.MaxVarintLen64 + len(name) + len(sk.Hash) + len(sk.Fingerprint) + len(sk.Meta)
	}
	b := make([]byte, 0, size)
	b = append(b, skillsMagic...)
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, name := range names {
		sk := rec.Skills[name]
		b = binrec.AppendString(b, name)
		b = append(b, sk.Hash[:]...)
		b = binrec.AppendString(b, sk.Fingerprint)
		b = binary.AppendUvarint(b, uint64(len(sk.Meta)))
		b = append(b, sk.Meta...)
	}
	return b
}

// encodeFiles encodes the file records of a source's skills.
func encodeFiles(rec *SourceRecord) []byte {
	names := sortedNames(rec.Skills)
	b := make([]byte, 0, 64+rec.Files()*72)
	b = append(b, filesMagic...)
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, name := range names {
		sk := rec.Skills[name]
		b = binrec.AppendString(b, name)
		if sk.raw != nil {
			b = append(b, sk.raw...)
			continue
		}
		files := sk.Files()
		b = binary.AppendUvarint(b, uint64(len(files)))
		for _, p := range sortedNames(files) {
			f := files[p]
			b = binrec.AppendString(b, p)
			b = append(b, f.SHA256[:]...)
			b = binary.AppendUvarint(b, uint64(f.Size))
			b = binary.AppendUvarint(b, uint64(f.Perm()))
			b = binary.AppendVarint(b, f.MTime)
		}
	}
	return b
}

// readHash reads a fixed-size hash.
func readHash(d *binrec.Decoder) Hash {
	var h Hash
	d.Fixed(h[:])
	return h
}

// decodeSkills decodes a source's skill records; their Files are nil.
// Names must be safe path components, in strictly increasing order. old
// reports records of the first version, whose hashes are of the old kind.
func decodeSkills(data []byte) (skills map[string]*SkillRecord, names []string, old bool, err error) {
	magic := skillsMagic
	if bytes.HasPrefix(data, []byte(oldSkillsMagic)) {
		magic, old = oldSkillsMagic, true
	}
	d := binrec.NewDecoder(data, magic)
	n := d.Count(1 + 32 + 1 + 1)
	skills = make(map[string]*SkillRecord, n)
	names = make([]string, 0, n)
	prev := ""
	for i := 0; i < n && d.Err() == nil; i++ {
		name := d.String()
		if d.Err() == nil {
			if err := checkName("skill", name); err != nil {
				return nil, nil, false, err
			}
			if i > 0 && name <= prev {
				d.Fail("skill %s is out of order", name)
			}
		}
		prev = name
		sk := &SkillRecord{Hash: readHash(d), Fingerprint: d.String(), Meta: d.Bytes()}
		skills[name] = sk
		names = append(names, name)
	}
	if err := d.End(); err != nil {
		return nil, nil, false, err
	}
	return skills, names, old, nil
}

// splitFiles checks the file records of a source whose skills are names,
// sorted, and returns the encoded files of each, in the same order. Paths
// must be clean relative paths inside the skill, in strictly increasing
// order. It changes no record: it may run while another goroutine reads
// them (Cache.ReadAhead).
func splitFiles(data []byte, names []string) ([][]byte, error) {
	d := binrec.NewDecoder(data, filesMagic)
	n := d.Count(1 + 1)
	if d.Err() == nil && n != len(names) {
		d.Fail("%d skills, the skill records hold %d", n, len(names))
	}
	raws := make([][]byte, 0, n)
	for i := 0; i < n && d.Err() == nil; i++ {
		if name := d.String(); d.Err() == nil && name != names[i] {
			d.Fail("skill %q where the skill records have %q", name, names[i])
		}
		start := d.Offset()
		if err := eachFile(d, names[i], nil); err != nil {
			return nil, err
		}
		end := d.Offset()
		raws = append(raws, data[start:end:end])
	}
	if err := d.End(); err != nil {
		return nil, err
	}
	return raws, nil
}

// giveFiles gives each skill of names its encoded files from raws, to
// decode when asked.
func giveFiles(skills map[string]*SkillRecord, names []string, raws [][]byte) {
	for i, name := range names {
		sk := skills[name]
		sk.files, sk.raw, sk.lazy = nil, raws[i], true
	}
}

// eachFile reads the files of one skill (their count, then each file),
// checks them and hands each to fn when fn is not nil. An error of the
// decoder is left in d; a path that is not a clean relative path is
// returned.
func eachFile(d *binrec.Decoder, skill string, fn func(path string, f FileRecord)) error {
	count := d.Count(1 + 32 + 1 + 1 + 1)
	prev := ""
	for j := 0; j < count && d.Err() == nil; j++ {
		p := d.String()
		if d.Err() != nil {
			break
		}
		if err := checkFilePath(p); err != nil {
			return fmt.Errorf("skill %s: %w", skill, err)
		}
		if j > 0 && p <= prev {
			d.Fail("skill %s file %s is out of order", skill, p)
		}
		prev = p
		f := FileRecord{SHA256: readHash(d)}
		size, perm := d.Uvarint(), d.Uvarint()
		f.MTime = d.Varint()
		if d.Err() == nil && (size > math.MaxInt64 || perm&^0o777 != 0) {
			d.Fail("skill %s file %s: size %d or mode %o out of range", skill, p, size, perm)
		}
		if fn != nil && d.Err() == nil {
			f.Size, f.Mode = int64(size), modeString(fs.FileMode(perm))
			fn(p, f)
		}
	}
	return nil
}

// decodeSkillFiles decodes the files of one skill from raw, which
// decodeFiles checked.
func decodeSkillFiles(raw []byte) map[string]FileRecord {
	n, _ := binary.Uvarint(raw)
	m := make(map[string]FileRecord, n)
	_ = eachFile(binrec.NewDecoder(raw, ""), "", func(p string, f FileRecord) { m[p] = f })
	return m
}

// recordPath is where the record file named by ref lives.
func recordPath(root string, ref Hash, ext string) string {
	return filepath.Join(root, recordsName, ref.String()+ext)
}

// readRecord reads the record file ref names and checks that its content
// hashes to ref. It follows no symbolic link and reads nothing but a
// regular file of at most maxRecordSize bytes. A missing file is
// errRecordGone; a file that does not check out is a
// *jsonfile.CorruptError.
func readRecord(root string, ref Hash, ext string) ([]byte, error) {
	name := recordPath(root, ref, ext)
	data, err := atomicfile.ReadBounded(name, maxRecordSize)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: %w", name, errRecordGone)
	case errors.Is(err, atomicfile.ErrSymlink):
		return nil, &jsonfile.CorruptError{Path: name, Err: errors.New("it is a symbolic link")}
	case errors.Is(err, atomicfile.ErrNotRegular), errors.Is(err, atomicfile.ErrTooLarge):
		return nil, &jsonfile.CorruptError{Path: name, Err: err}
	case err != nil:
		return nil, err
	}
	if Hash(sha256.Sum256(data)) != ref {
		return nil, &jsonfile.CorruptError{Path: name, Err: errors.New("its content does not hash to its name")}
	}
	return data, nil
}

// writeRecord writes data as a record file named by its hash, durably,
// and returns the hash. A file of that name is replaced whole (it holds
// the same bytes unless someone changed it), never written through.
func writeRecord(d dest, root string, data []byte, ext string) (Hash, error) {
	ref := Hash(sha256.Sum256(data))
	dir := filepath.Join(root, recordsName)
	err := d.mkdirNoFollow(dir)
	if errors.Is(err, errNotFolder) || errors.Is(err, atomicfile.ErrSymlink) {
		// The cache is skillsync's, and its records can be made again
		// (what they recorded is hashed again): a file or a link in
		// their place is removed, never followed, rather than failing
		// every sync until someone removes it.
		if rerr := d.remove(dir); rerr == nil {
			err = d.mkdirNoFollow(dir)
		}
	}
	if err != nil {
		return Hash{}, err
	}
	if err := d.writeFile(recordPath(root, ref, ext), data, 0o644); err != nil {
		return Hash{}, err
	}
	return ref, nil
}

// isRecordName reports whether name is a record file (or a temporary
// one atomicfile left behind) that the records folder may lose once
// nothing names it.
func isRecordName(name string) bool {
	base, ext := name, ""
	switch {
	case strings.HasSuffix(name, skillsExt):
		base, ext = strings.TrimSuffix(name, skillsExt), skillsExt
	case strings.HasSuffix(name, filesExt):
		base, ext = strings.TrimSuffix(name, filesExt), filesExt
	}
	if ext != "" {
		h, err := ParseHash(base)
		return err == nil && !h.IsZero()
	}
	// atomicfile's temporary files: ".<name>.tmp-<random>".
	i := strings.Index(name, ".tmp-")
	return strings.HasPrefix(name, ".") && i > 0 && isRecordName(name[1:i])
}

// pruneRecords removes the record files of root that keep does not name.
// Anything else in the folder is left alone.
func pruneRecords(d dest, root string, keep map[string]bool) error {
	dir := filepath.Join(root, recordsName)
	if info, err := os.Lstat(dir); err == nil && !info.IsDir() {
		// A link (or a file) planted in its place: nothing through it is
		// the cache's to remove.
		return nil
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if keep[e.Name()] || !e.Type().IsRegular() || !isRecordName(e.Name()) {
			continue
		}
		if err := d.remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// refNames adds the file names of m's records to keep.
func refNames(m *Manifest, keep map[string]bool) {
	for _, rec := range m.Sources {
		if !rec.skillsRef.IsZero() {
			keep[rec.skillsRef.String()+skillsExt] = true
		}
		if !rec.filesRef.IsZero() {
			keep[rec.filesRef.String()+filesExt] = true
		}
	}
}

// loadSkills reads the skill records of every source of an index.
func loadSkills(root string, m *Manifest) error {
	for _, source := range sortedNames(m.Sources) {
		rec := m.Sources[source]
		if rec.Skills != nil {
			continue
		}
		if err := rec.loadSkills(root); err != nil {
			return fmt.Errorf("source %s: %w", source, err)
		}
	}
	return nil
}

func (rec *SourceRecord) loadSkills(root string) error {
	data, err := readRecord(root, rec.skillsRef, skillsExt)
	if err != nil {
		return err
	}
	skills, names, old, err := decodeSkills(data)
	if err != nil {
		return &jsonfile.CorruptError{Path: recordPath(root, rec.skillsRef, skillsExt), Err: err}
	}
	rec.Skills, rec.read = skills, names
	if old {
		rec.upgrade(root)
	}
	return nil
}

// sortedSkills returns the names of rec.Skills, sorted: the order the
// record file held them in (decodeSkills checks it) while they are still
// the names in Skills, else sorted anew. A catalog read of 2,000 skills
// sorted them in a third of a millisecond; the check costs a lookup each.
// The caller must not change the slice.
func (rec *SourceRecord) sortedSkills() []string {
	if len(rec.read) != len(rec.Skills) {
		return sortedNames(rec.Skills)
	}
	for _, name := range rec.read {
		if _, ok := rec.Skills[name]; !ok {
			return sortedNames(rec.Skills)
		}
	}
	return rec.read
}

// upgrade gives the skills of records of the first version the hashes of
// today's kind, computed from their file records: no cached file is read.
// The records are then written anew by the next commit (their refs are
// dropped); until then every reader upgrades them in memory. When the
// file records cannot be read, the skills are kept with no hash and their
// files are hashed again by the next sync (loseFiles), as when today's
// file records are lost: a reader still lists them.
func (rec *SourceRecord) upgrade(root string) {
	if err := rec.loadFiles(root); err != nil {
		rec.loseFiles(err)
		for _, sk := range rec.Skills {
			sk.Hash = Hash{} // of the first kind, which nothing could check
		}
		return
	}
	for _, sk := range rec.Skills {
		sk.Hash = filesHash(sk.Files())
	}
	rec.skillsRef, rec.filesRef = Hash{}, Hash{}
}

// loseFiles marks a source whose file records cannot be read (err): its
// revision is forgotten, so the next sync looks at it and hashes its
// cached files again, never trusted.
func (rec *SourceRecord) loseFiles(err error) {
	rec.filesLost, rec.filesErr = true, err
	rec.Revision = ""
	for _, sk := range rec.Skills {
		sk.files, sk.raw, sk.lazy = map[string]FileRecord{}, nil, false
	}
}

// loadFiles reads the file records of one source whose skill records are
// loaded, or takes them from the read ahead of them.
func (rec *SourceRecord) loadFiles(root string) error {
	if rec.filesLoaded {
		return nil
	}
	ahead := rec.ahead
	if ahead == nil || ahead.ref != rec.filesRef {
		ahead = newFilesAhead(rec)
	}
	rec.ahead = nil
	raws, err := ahead.read(root)
	if err != nil {
		return err
	}
	giveFiles(rec.Skills, ahead.names, raws)
	rec.filesLoaded = true
	return nil
}

// filesAhead is the reading of one source's file records, which
// Cache.ReadAhead lets another goroutine start before the sync needs
// them: whichever asks first reads, the other waits for it. Its names
// stay the record's: a record whose files are not loaded yet is never
// changed, only replaced.
type filesAhead struct {
	ref   Hash
	names []string
	once  sync.Once
	raws  [][]byte
	err   error
}

// newFilesAhead returns the reading of rec's file records, not begun.
// The names are sorted by the reading: a sync with nothing new, which
// reads no records, sorts none.
func newFilesAhead(rec *SourceRecord) *filesAhead {
	return &filesAhead{ref: rec.filesRef, names: slices.Collect(maps.Keys(rec.Skills))}
}

// read reads and checks the records once, and returns what that found;
// names is sorted from then on.
func (a *filesAhead) read(root string) ([][]byte, error) {
	a.once.Do(func() {
		slices.Sort(a.names)
		data, err := readRecord(root, a.ref, filesExt)
		if err == nil {
			if a.raws, err = splitFiles(data, a.names); err != nil {
				err = &jsonfile.CorruptError{Path: recordPath(root, a.ref, filesExt), Err: err}
			}
		}
		a.err = err
	})
	return a.raws, a.err
}

// writeRecords writes the record files of every source whose records
// changed in memory.
func (m *Manifest) writeRecords(d dest, root string) error {
	for _, source := range sortedNames(m.Sources) {
		rec := m.Sources[source]
		if !rec.skillsRef.IsZero() && !rec.filesRef.IsZero() {
			continue
		}
		if !rec.filesLoaded {
			return fmt.Errorf("source %s: its file records are not loaded", source)
		}
		var err error
		if rec.skillsRef, err = writeRecord(d, root, encodeSkills(rec), skillsExt); err != nil {
			return fmt.Errorf("source %s: %w", source, err)
		}
		if rec.filesRef, err = writeRecord(d, root, encodeFiles(rec), filesExt); err != nil {
			return fmt.Errorf("source %s: %w", source, err)
		}
		rec.files = rec.Files()
	}
	return nil
}

// readManifest reads the manifest at root and the records of its
// sources: with every skill's files when files is set. A record replaced
// by a sync while it was being read is read again from the new manifest.
func readManifest(root string, files bool) (*Manifest, error) {
	var lastErr error
	for range 5 {
		m, legacyFile, err := loadIndex(root)
		if err != nil || legacyFile {
			return m, err
		}
		err = loadSkills(root, m)
		if err == nil && files {
			for _, source := range sortedNames(m.Sources) {
				if err = m.Sources[source].loadFiles(root); err != nil {
					err = fmt.Errorf("source %s: %w", source, err)
					break
				}
			}
		}
		if err == nil {
			return m, nil
		}
		if !errors.Is(err, errRecordGone) {
			return NewManifest(), err
		}
		lastErr = err
	}
	return NewManifest(), lastErr
}
