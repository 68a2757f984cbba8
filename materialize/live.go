package materialize

import (
	"io/fs"
	"path"
	"strings"
)

// The stager's looks at a skill's live folder, from the descriptor it
// opened (st.tree): a sync that changes a file in each of a thousand
// skills looks at the other files of each, and at their folders, some
// 16,000 lstats in all, which from the folder's descriptor cost the
// kernel half as much as by the whole path.

// linkable reports whether the live file at rel can be hard-linked into a
// new version: live is a real directory and no element of rel is a
// symbolic link, which could lead out of the destination.
func (st *stager) linkable(rel string) bool {
	_, ok := st.liveFile(rel)
	return ok
}

// liveFile is linkable, with what lstat said of the file.
func (st *stager) liveFile(rel string) (fs.FileInfo, bool) {
	if !st.realDirs(path.Dir(rel)) {
		return nil, false
	}
	info, err := st.tree.Lstat(rel)
	if err != nil || !info.Mode().IsRegular() {
		return nil, false
	}
	return info, true
}

// realDirs reports whether live and every folder on the slash path rel
// below it ("." for none) are real directories, none a symbolic link.
// st.dirs holds the folders already found real, and gets those found
// now, so the files of one folder cost one lstat of it between them.
func (st *stager) realDirs(rel string) bool {
	if st.tree == nil {
		return false
	}
	if rel == "." {
		return true
	}
	for i := 0; ; {
		end := strings.IndexByte(rel[i:], '/')
		dir := rel
		if end >= 0 {
			dir = rel[:i+end]
		}
		if !st.dirs[dir] {
			info, err := st.tree.Lstat(dir)
			if err != nil || !info.IsDir() {
				return false
			}
			st.dirs[dir] = true
		}
		if end < 0 {
			return true
		}
		i += end + 1
	}
}

// close closes the live folder's descriptor, once the stager is done.
func (st *stager) close() {
	if st.tree != nil {
		st.tree.Close()
		st.tree = nil
	}
}
