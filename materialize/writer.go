package materialize

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"

	"github.com/skillsync/skillsync/skill"
)

// Skill is one skill to write.
type Skill struct {
	Name  string
	Files fs.FS
	// List is the files to write, from skill.ListFiles.
	List []skill.File
	// GuessModes is set for sources without file modes (an embedded FS): a
	// file starting with "#!" becomes 0755, every other 0644.
	GuessModes bool
	// Fingerprint, when set, identifies the skill's content in its source
	// (a git tree hash): a skill whose fingerprint and live files match the
	// record is not read at all.
	Fingerprint string
	// Meta is stored with the skill's record as given (its parsed
	// frontmatter, for readers that must not parse SKILL.md again).
	Meta json.RawMessage
}

// Stats counts what a run wrote.
type Stats struct {
	Written      int   `json:"written"`
	Unchanged    int   `json:"unchanged"`
	Removed      int   `json:"removed"`
	BytesWritten int64 `json:"bytes_written"`
}

// Writer assembles changed skills in a staging directory and swaps them
// into place together in Commit.
type Writer struct {
	staging string
	// Verify hashes every live file instead of trusting its stat data, and
	// counts files nobody recorded as differences.
	Verify bool
	// KeepOld leaves the versions swapped out in staging, for the next
	// run to remove, instead of removing them at once: a reader that
	// opened an old directory just before the swap can finish reading it.
	KeepOld bool
	Stats   Stats

	// builds write staged skills in the background while the caller reads
	// the next skill from its source: creating files is kernel time, and
	// on these machines it is most of a cold sync.
	builds  errgroup.Group
	mu      sync.Mutex // guards Stats and pending while builds run
	pending []swap
}

// parallelBuilds is how many skills are written to staging at once.
const parallelBuilds = 4

type swap struct {
	staged, live string
}

// NewWriter returns a Writer that builds in staging, which must be on the
// same file system as the destinations. Whatever staging holds is left
// over from an interrupted run and is removed.
func NewWriter(staging string) (*Writer, error) {
	if err := replaceWithDir(staging); err != nil {
		return nil, err
	}
	w := &Writer{staging: staging}
	w.builds.SetLimit(parallelBuilds)
	return w, nil
}

// replaceWithDir makes path an empty directory, removing what was there.
// A symbolic link is removed, never followed.
func replaceWithDir(path string) error {
	if err := os.RemoveAll(path); err != nil {
		return fmt.Errorf("empty %s: %w", path, err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	return nil
}

// ensureDir makes path a real directory: a symbolic link or a file in its
// place is removed, so nothing written below it can land elsewhere.
func ensureDir(path string) error {
	info, err := os.Lstat(path)
	switch {
	case err == nil && info.IsDir():
		return nil
	case err == nil:
		if err := os.Remove(path); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	return os.Mkdir(path, 0o755)
}

// desired is one file as it should be.
type desired struct {
	path string
	data []byte
	sha  Hash
	mode fs.FileMode
}

// Stage compares s with the live directory and, when anything differs,
// builds the new version in staging for Commit to swap in. old is what the
// last run recorded for live, or nil. It returns the record of the skill
// as it will be and whether it changed. check, when not nil, sees the
// skill's hash first and can refuse the skill, which leaves live as it is.
func (w *Writer) Stage(ctx context.Context, live string, s Skill, old *SkillRecord, check func(Hash) error) (*SkillRecord, bool, error) {
	if s.Fingerprint != "" && old != nil && old.Fingerprint == s.Fingerprint && !w.Verify && statMatches(live, old) {
		if check != nil {
			if err := check(old.Hash); err != nil {
				return nil, false, err
			}
		}
		w.count(Stats{Unchanged: len(old.Files)})
		rec := *old
		rec.Meta = s.Meta
		return &rec, false, nil
	}
	files, hash, err := read(ctx, s)
	if err != nil {
		return nil, false, err
	}
	if check != nil {
		if err := check(hash); err != nil {
			return nil, false, err
		}
	}
	rec := &SkillRecord{Hash: hash, Fingerprint: s.Fingerprint, Meta: s.Meta, Files: make(map[string]FileRecord, len(files))}
	same := make([]bool, len(files))
	for i, f := range files {
		var prev *FileRecord
		if old != nil {
			if r, ok := old.Files[f.path]; ok {
				prev = &r
			}
		}
		info, sha := w.liveFile(filepath.Join(live, filepath.FromSlash(f.path)), prev)
		same[i] = info != nil && sha == f.sha && info.Mode().Perm() == f.mode
		if same[i] {
			rec.Files[f.path] = FileRecord{SHA256: f.sha, Size: info.Size(), Mode: modeString(f.mode), MTime: info.ModTime().UnixNano()}
		}
	}
	changed := slices.Contains(same, false)
	if !changed && (old == nil || len(old.Files) != len(files) || w.Verify) {
		// Every wanted file is in place; a file that should be gone may not be.
		changed = len(extraFiles(live, rec.Files)) > 0
	}
	if !changed {
		w.count(Stats{Unchanged: len(files)})
		return rec, false, nil
	}
	// rec is filled in by the build; nobody reads it before Commit, which
	// waits for every build.
	w.builds.Go(func() error {
		staged, st, err := w.build(live, files, same, rec)
		if err != nil {
			return fmt.Errorf("stage skill %s: %w", s.Name, err)
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		w.pending = append(w.pending, swap{staged: staged, live: live})
		w.Stats.add(st)
		return nil
	})
	return rec, true, nil
}

// matches reports whether live holds exactly s's files with their modes
// and nothing else, and the record of it then. It writes nothing.
func (w *Writer) matches(ctx context.Context, live string, s Skill) (*SkillRecord, bool) {
	if info, err := os.Lstat(live); err != nil || !info.IsDir() {
		return nil, false
	}
	files, hash, err := read(ctx, s)
	if err != nil {
		return nil, false
	}
	rec := &SkillRecord{Hash: hash, Files: make(map[string]FileRecord, len(files))}
	for _, f := range files {
		info, err := os.Lstat(filepath.Join(live, filepath.FromSlash(f.path)))
		if err != nil || !info.Mode().IsRegular() || info.Mode().Perm() != f.mode || info.Size() != int64(len(f.data)) {
			return nil, false
		}
		if sha, err := hashFile(filepath.Join(live, filepath.FromSlash(f.path))); err != nil || sha != f.sha {
			return nil, false
		}
		rec.Files[f.path] = FileRecord{SHA256: f.sha, Size: info.Size(), Mode: modeString(f.mode), MTime: info.ModTime().UnixNano()}
	}
	return rec, len(extraFiles(live, rec.Files)) == 0
}

func (s *Stats) add(o Stats) {
	s.Written += o.Written
	s.Unchanged += o.Unchanged
	s.Removed += o.Removed
	s.BytesWritten += o.BytesWritten
}

func (w *Writer) count(st Stats) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.Stats.add(st)
}

// statMatches reports whether every recorded file of a live skill still
// has the size, mtime and mode it was written with.
func statMatches(live string, rec *SkillRecord) bool {
	for path, f := range rec.Files {
		info, err := os.Lstat(filepath.Join(live, filepath.FromSlash(path)))
		if err != nil || !info.Mode().IsRegular() || info.Size() != f.Size ||
			info.ModTime().UnixNano() != f.MTime || info.Mode().Perm() != f.perm() {
			return false
		}
	}
	return true
}

// read loads a skill's files and computes its hash.
func read(ctx context.Context, s Skill) ([]desired, Hash, error) {
	list := make([]skill.File, len(s.List))
	copy(list, s.List)
	sort.Slice(list, func(i, j int) bool { return list[i].Path < list[j].Path })
	h := newSkillHasher()
	files := make([]desired, 0, len(list))
	for _, f := range list {
		if err := ctx.Err(); err != nil {
			return nil, Hash{}, err
		}
		data, err := fs.ReadFile(s.Files, f.Path)
		if err != nil {
			return nil, Hash{}, fmt.Errorf("read skill %s file %s: %w", s.Name, f.Path, err)
		}
		h.add(f.Path, data)
		files = append(files, desired{path: f.Path, data: data, sha: sha256.Sum256(data), mode: fileMode(f.Mode, data, s.GuessModes)})
	}
	return files, h.sum(), nil
}

// fileMode is 0755 for executables and 0644 for the rest.
func fileMode(m fs.FileMode, data []byte, guess bool) fs.FileMode {
	exec := m&0o111 != 0
	if guess {
		exec = bytes.HasPrefix(data, []byte("#!"))
	}
	if exec {
		return 0o755
	}
	return 0o644
}

// liveFile returns the stat data and content hash of a live file, or nil
// when it is not a regular file. The hash comes from the record when the
// stat data still match it, unless the writer verifies.
func (w *Writer) liveFile(path string, rec *FileRecord) (fs.FileInfo, Hash) {
	info, err := os.Lstat(path)
	if err != nil || !info.Mode().IsRegular() {
		return nil, Hash{}
	}
	if rec != nil && !w.Verify && info.Size() == rec.Size && info.ModTime().UnixNano() == rec.MTime && info.Mode().Perm() == rec.perm() {
		return info, rec.SHA256
	}
	sha, err := hashFile(path)
	if err != nil {
		return nil, Hash{}
	}
	return info, sha
}

// hashFile hashes a regular file without following a final symbolic link.
func hashFile(path string) (Hash, error) {
	var sum Hash
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return sum, fmt.Errorf("%s is not a regular file", path)
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return sum, err
	}
	h.Sum(sum[:0])
	return sum, nil
}

// build assembles the new version: unchanged files hard-linked from live,
// so they keep their inode and mtime, the rest written. It fills rec with
// the files written and returns what it did.
func (w *Writer) build(live string, files []desired, same []bool, rec *SkillRecord) (string, Stats, error) {
	var st Stats
	staged := filepath.Join(w.staging, randomName())
	if err := os.Mkdir(staged, 0o755); err != nil {
		return "", st, err
	}
	for i, f := range files {
		dst := filepath.Join(staged, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", st, err
		}
		if same[i] && w.link(filepath.Join(live, filepath.FromSlash(f.path)), dst) {
			st.Unchanged++
			continue
		}
		if err := writeFile(dst, f.data, f.mode); err != nil {
			return "", st, err
		}
		info, err := os.Lstat(dst)
		if err != nil {
			return "", st, err
		}
		rec.Files[f.path] = FileRecord{SHA256: f.sha, Size: info.Size(), Mode: modeString(f.mode), MTime: info.ModTime().UnixNano()}
		st.Written++
		st.BytesWritten += int64(len(f.data))
	}
	return staged, st, nil
}

// link hard-links an unchanged live file into staging. It refuses a path
// that passes through a symbolic link, which could lead out of the
// destination.
func (w *Writer) link(src, dst string) bool {
	if real, err := filepath.EvalSymlinks(src); err != nil || real != src {
		return false
	}
	return os.Link(src, dst) == nil
}

func writeFile(name string, data []byte, mode fs.FileMode) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func randomName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Remove takes a live skill directory, or a symbolic link in its place
// (the link itself, never its target), out of the destination with one
// rename, so a reader sees it whole or not at all, then deletes it (or,
// with KeepOld, leaves that to the next run). It counts the files
// recorded for it.
func (w *Writer) Remove(live string, rec *SkillRecord) error {
	aside := filepath.Join(w.staging, randomName())
	if err := os.Rename(live, aside); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", live, err)
	}
	if !w.KeepOld {
		if err := os.RemoveAll(aside); err != nil {
			return fmt.Errorf("remove %s: %w", live, err)
		}
	}
	if rec != nil {
		w.count(Stats{Removed: len(rec.Files)})
	}
	return nil
}

// Commit makes everything staged durable with one syncfs, then swaps each
// skill into place and removes the old versions. A crash at any point
// leaves every live directory whole: old before its swap, new after.
// Once the swaps begin they all run, even if ctx is cancelled meanwhile:
// they are renames, quick, and stopping halfway would leave the record
// behind the files.
func (w *Writer) Commit(ctx context.Context) error {
	if err := w.builds.Wait(); err != nil {
		return err
	}
	if len(w.pending) == 0 {
		return nil
	}
	if err := syncFS(w.staging); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	parents := map[string]bool{}
	for _, s := range w.pending {
		old, err := exchange(s.staged, s.live)
		if err != nil {
			return fmt.Errorf("swap in %s: %w", s.live, err)
		}
		parents[filepath.Dir(s.live)] = true
		if old != "" && !w.KeepOld {
			if err := os.RemoveAll(old); err != nil {
				return fmt.Errorf("remove old copy of %s: %w", s.live, err)
			}
		}
	}
	w.pending = nil
	for p := range parents {
		if err := syncDir(p); err != nil {
			return err
		}
	}
	return nil
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
