package materialize

import (
	"io/fs"

	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// reuse takes a file of a changed skill from its live copy when the
// source says the file did not change since the version the record holds
// (repository.SameContent: a git tree compares blob hashes) and the live
// copy still has the stat data it was written with. Its SHA-256 is then
// the record's, and that is all the skill's hash takes of a file
// (internal/skillhash): the file is neither read nor hashed, so a sync
// that brings a changed file of a skill reads that file alone.
//
// The stat check is the one a sync with nothing new trusts (liveHash):
// size, mtime in nanoseconds and permission bits as recorded. Anything
// else (no record, other stat data, a mode the source changed, a run that
// hashes every file, a source whose modes are guessed from content)
// leaves the file to be read from the source; a path through a link
// planted in the cache has the skill built whole, so the link goes.
func (st *stager) reuse(f skill.File) (sameFile, bool) {
	prev, info, ok := st.reusable(f)
	if !ok {
		return sameFile{}, false
	}
	if info.Size() != prev.Size || info.ModTime().UnixNano() != prev.MTime || !st.w.rules.permMatches(info.Mode(), prev.Perm()) {
		return sameFile{}, false
	}
	mode := fileMode(f.Mode, nil, false)
	if !st.w.rules.permMatches(info.Mode(), mode) {
		return sameFile{}, false
	}
	st.read += f.Size
	st.hasher.Add(f.Path, f.Size, prev.SHA256)
	return sameFile{f.Path, FileRecord{SHA256: prev.SHA256, Size: f.Size, Mode: modeString(mode), MTime: prev.MTime}}, true
}

// reusable returns the record of a file reuse may read from the live
// copy, and what lstat says of that copy: the source says it is
// unchanged, and its live path is a regular file in real folders.
func (st *stager) reusable(f skill.File) (FileRecord, fs.FileInfo, bool) {
	if st.dryRun || !st.liveDir || st.old == nil || st.w.hashes() || st.s.GuessModes {
		return FileRecord{}, nil, false
	}
	prev, ok := st.old.Files()[f.Path]
	if !ok || prev.Size != f.Size || (st.maxSize > 0 && st.read+f.Size > st.maxSize) {
		return FileRecord{}, nil, false
	}
	if !repository.SameContent(st.s.Files, st.old.Fingerprint, f.Path) {
		return FileRecord{}, nil, false
	}
	info, ok := st.liveFile(f.Path)
	if !ok {
		st.plan = patchPlan{} // built whole: nothing planted stays
		return FileRecord{}, nil, false
	}
	return prev, info, true
}
