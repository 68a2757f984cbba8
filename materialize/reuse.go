package materialize

import (
	"crypto/sha256"
	"io/fs"
	"path/filepath"

	"github.com/skillsync/skillsync/internal/platform"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// reuse takes a file of a changed skill from its live copy when the
// source says the file did not change since the version the record holds
// (repository.SameContent: a git tree compares blob hashes). The skill's
// hash covers every file, so a skill with one file edited is hashed
// whole; reading the others back from the page cache costs a read where
// the source would inflate them from its packs, most of a 1% sync's CPU.
//
// The live bytes are taken only when they hash as the record says: the
// record was written from the earlier version's content, which the
// source says is this version's, so bytes with the record's hash are the
// source's. Anything else (no record, another size, a file edited in the
// cache, a mode that changed, a hashing run) leaves the file to be read
// from the source; a copy that does not hash as recorded is then hashed
// again, its stat data not trusted (stale), and a path through a link
// planted in the cache has the skill built whole, so the link goes.
func (st *stager) reuse(f skill.File) (sameFile, bool) {
	prev, pre, ok := st.reusable(f)
	if !ok {
		return sameFile{}, false
	}
	chunk := st.w.chunk()
	defer st.w.recycle(chunk)
	data := (*chunk)[:f.Size]
	perm, mtime, ok := platform.ReadRegular(filepath.Join(st.live, filepath.FromSlash(f.Path)), pre, data)
	if !ok {
		return sameFile{}, false
	}
	if Hash(sha256.Sum256(data)) != prev.SHA256 {
		st.stale = f.Path
		return sameFile{}, false
	}
	mode := fileMode(f.Mode, data[:min(2, len(data))], st.s.GuessModes)
	if !st.w.rules.permMatches(perm, mode) {
		return sameFile{}, false
	}
	st.read += f.Size
	st.hasher.add(f.Path, data)
	return sameFile{f.Path, FileRecord{SHA256: prev.SHA256, Size: f.Size, Mode: modeString(mode), MTime: mtime.UnixNano()}}, true
}

// reusable returns the record of a file reuse may read from the live
// copy, and what lstat says of that copy: the source says it is
// unchanged, and its live path is a regular file in real folders.
func (st *stager) reusable(f skill.File) (FileRecord, fs.FileInfo, bool) {
	if st.dryRun || !st.liveDir || st.old == nil || st.w.hashes() || f.Size > chunkSize {
		return FileRecord{}, nil, false
	}
	prev, ok := st.old.Files[f.Path]
	if !ok || prev.Size != f.Size || (st.maxSize > 0 && st.read+f.Size > st.maxSize) {
		return FileRecord{}, nil, false
	}
	if !repository.SameContent(st.s.Files, st.old.Fingerprint, f.Path) {
		return FileRecord{}, nil, false
	}
	if st.dirs == nil {
		st.dirs = map[string]bool{}
	}
	info, ok := liveFile(st.live, f.Path, st.dirs)
	if !ok {
		st.plan = patchPlan{} // built whole: nothing planted stays
		return FileRecord{}, nil, false
	}
	return prev, info, true
}
