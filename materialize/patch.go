package materialize

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillsync/skillsync/internal/platform"
	"github.com/skillsync/skillsync/skill"
)

// A skill whose new version differs from the live one by one file (its
// content or mode changed, or it was added to a folder the skill has, or
// removed from a folder that keeps other files) is patched rather than
// built again: the new file is written alone into staging and, at
// commit, renamed over the live one (or the removed one is unlinked).
// One rename is as atomic as the exchange of the whole folder, so a
// reader still sees the old version or the new, never a mix; and the
// skill's folders and its other files are not touched, where a build
// creates every folder of the skill again (creating an inode is most of
// what a 1% sync costs) and links every file. Two changes or more, a
// change that needs a new folder or empties one, a user's edit kept
// aside, a live copy that is not a real directory: the whole skill is
// built as before.

// patchKind is what a patch does to its live file.
type patchKind uint8

const (
	patchWrite  patchKind = iota // rename staged onto the live path (replace or add)
	patchRemove                  // remove the live file
)

// patch is the one file a skill's new version changes.
type patch struct {
	kind patchKind
	// path is the file's slash path in the skill; staged is where its new
	// content waits in staging (patchWrite).
	path   string
	staged string
	rec    FileRecord
	// added is set for a file the live copy does not have yet.
	added bool
}

// patchPlan is what a stager knows before it reads: whether the skill
// may be patched, and the path the new listing adds or drops.
type patchPlan struct {
	ok      bool
	added   string // a path the listing has and the record does not
	removed string // a path the record has and the listing does not
}

// planPatch compares the new listing with the record of the live copy:
// a patch is possible only when they differ by one path at most.
func planPatch(list []skill.File, old *SkillRecord, liveDir bool) patchPlan {
	if old == nil || !liveDir {
		return patchPlan{}
	}
	var p patchPlan
	files := old.Files()
	n := 0
	for _, f := range list {
		if _, ok := files[f.Path]; !ok {
			if p.added != "" {
				return patchPlan{}
			}
			p.added = f.Path
			continue
		}
		n++
	}
	if len(files)-n > 1 {
		return patchPlan{}
	}
	if len(files) > n {
		listed := make(map[string]bool, len(list))
		for _, f := range list {
			listed[f.Path] = true
		}
		for name := range files {
			if !listed[name] {
				p.removed = name
			}
		}
	}
	if p.added != "" && p.removed != "" {
		return patchPlan{}
	}
	p.ok = true
	return p
}

// patchable reports whether a file about to be written can be the
// skill's one patch: nothing written yet, and the file is the one path
// added or one the record has.
func (st *stager) patchable(p string) bool {
	if !st.plan.ok || st.b != nil || st.patch != nil || st.plan.removed != "" {
		return false
	}
	if st.plan.added != "" && st.plan.added != p {
		return false
	}
	return true
}

// writePatch streams one file into a file of its own in staging, the
// skill's patch. want, when not nil, is the hash the content must have.
func (st *stager) writePatch(f skill.File, src io.Reader, size int64, want *Hash) (Hash, error) {
	out, name := st.w.takeFile(size)
	kept := out != nil
	if !kept {
		name = filepath.Join(st.w.staging, randomName()+patchSuffix)
		var err error
		if out, err = st.w.dest.openFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err != nil {
			return Hash{}, err
		}
	}
	var werr error
	var written int64
	sha, head, err := st.pump(src, size, func(chunk *[]byte, n int) {
		if werr == nil {
			if kept {
				_, werr = out.WriteAt(pagePadded(*chunk, n, written), written)
			} else {
				_, werr = out.Write((*chunk)[:n])
			}
			written += int64(n)
		}
		st.w.recycle(chunk)
	})
	if err == nil {
		err = werr
	}
	if err == nil && kept {
		// What the kept file held past the new content, and the padding.
		err = out.Truncate(written)
	}
	if err == nil && want != nil && sha != *want {
		err = errors.New("its content changed while it was read")
	}
	var info fs.FileInfo
	mode := fileMode(f.Mode, head, st.s.GuessModes)
	if err == nil {
		info, err = out.Stat()
	}
	if err == nil && info.Mode().Perm() != mode.Perm() {
		err = out.Chmod(mode)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = st.w.dest.remove(name)
		return sha, err
	}
	st.patch = &patch{kind: patchWrite, path: f.Path, staged: name,
		rec: FileRecord{SHA256: sha, Size: info.Size(), Mode: modeString(mode), MTime: info.ModTime().UnixNano()}}
	return sha, nil
}

// pagePadded returns the n bytes at the start of buf, to be written at
// off, with zeros after them up to the file's next 4 KiB boundary when
// buf has room for them. A write that ends inside a page of a file that
// held content there has the kernel read that page first, when it is not
// cached, to keep the rest of it: 300 to 600 us each in a kept file on
// our machine. The zeros are written over by the next chunk, or cut with
// the old content.
func pagePadded(buf []byte, n int, off int64) []byte {
	pad := int((4096 - (off+int64(n))%4096) % 4096)
	if n+pad > len(buf) {
		return buf[:n]
	}
	clear(buf[n : n+pad])
	return buf[:n+pad]
}

// unpatch gives up the patch: a second file differs, so the skill is
// built whole, and the file already written goes into the build.
func (st *stager) unpatch() {
	if st.patch == nil {
		return
	}
	p := st.patch
	st.patch = nil
	st.build().send(op{kind: opAdopt, path: p.path, src: p.staged, rec: p.rec})
}

// dropPatch removes a patch's staged file when the skill fails.
func (st *stager) dropPatch() {
	if st.patch != nil && st.patch.staged != "" {
		_ = st.w.dest.remove(st.patch.staged)
	}
	st.patch = nil
}

// finishPatch decides, once every file is read, whether the skill goes
// live as its one patch: every folder of the skill must be a real folder
// of the live copy (no link, nothing else), a file must be added
// to a folder that is there and removed from one that keeps other files,
// and a live copy not trusted must hold no file the record does not
// know. It returns nil when the skill is to be built whole.
func (st *stager) finishPatch(files map[string]FileRecord) *patch {
	p := st.patch
	switch {
	case !st.plan.ok || st.b != nil:
		return nil
	case p == nil && st.plan.removed != "":
		dir := path.Dir(st.plan.removed)
		if dir != "." && !hasFileIn(files, dir) {
			return nil // the folder would be left empty
		}
		p = &patch{kind: patchRemove, path: st.plan.removed}
	case p == nil:
		return nil
	}
	switch {
	case p.kind == patchRemove || p.path != st.plan.added:
		// The live file is there: a regular file through real folders.
		if !st.linkable(p.path) {
			return nil
		}
	default:
		// Added: its folder is there, the file is not.
		if dir := path.Dir(p.path); !st.realDirs(dir) {
			return nil
		}
		if _, err := st.tree.Lstat(p.path); !errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		p.added = true
	}
	// Every folder of the skill is real: a file compared with its live
	// copy (a source that cannot tell which files did not change) is
	// compared through a folder planted as a link, and a patch would
	// leave the link in place. Reuse has found most of them real already.
	for name := range files {
		if !st.realDirs(path.Dir(name)) {
			return nil
		}
	}
	if !st.w.trusts() {
		for _, extra := range st.w.rules.extraFiles(st.live, files) {
			rel, _ := filepath.Rel(st.live, extra)
			if p.kind != patchRemove || filepath.ToSlash(rel) != p.path {
				return nil
			}
		}
	}
	return p
}

// hasFileIn reports whether files has a file below folder dir.
func hasFileIn(files map[string]FileRecord, dir string) bool {
	for p := range files {
		if strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	return false
}

// patchSwap queues a skill's patch for commit.
func (w *writer) patchSwap(live string, p *patch, failed func(error)) {
	s := &swap{live: filepath.Join(live, filepath.FromSlash(p.path)), failed: failed, patch: true}
	switch {
	case p.kind == patchRemove:
		s.remove = true
		if w.keepOld {
			s.staged = filepath.Join(w.staging, randomName()+patchSuffix)
		}
	default:
		s.staged = p.staged
		s.exchange = w.keepOld && !p.added
		w.count(Stats{Written: 1, BytesWritten: p.rec.Size})
	}
	w.queue(s)
}

// swapPatch puts one patch in place. A file replaced or removed goes to
// staging where the writer keeps old versions (keepOld), for a later
// patch to write into (takeFile): the staged file and the live one
// exchanged in one step, or the removed one moved there. Elsewhere, where
// the system has no exchange, or where the live path is no longer a
// regular file, the staged file is renamed over the live path (which
// refuses a folder) and the removed one unlinked.
func (d dest) swapPatch(s *swap) error {
	if s.remove {
		if s.staged != "" && d.rename(s.live, s.staged) == nil {
			if d.keptFile(s.staged) {
				return nil
			}
			// Not a file: it goes back, to be removed as before.
			if err := d.rename(s.staged, s.live); err != nil {
				s.changed = true
				return fmt.Errorf("remove %s: %w", s.live, err)
			}
		}
		if err := d.remove(s.live); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", s.live, err)
		}
		return nil
	}
	if s.exchange && d.exchange(s.staged, s.live) == nil {
		if d.keptFile(s.staged) {
			return nil
		}
		// The live path held no file (a folder put there since the patch
		// was planned): the two go back, and the rename refuses a folder
		// as it did before exchanges.
		if err := d.exchange(s.staged, s.live); err != nil {
			s.changed = true
			return fmt.Errorf("put back %s: %w", s.live, err)
		}
	}
	return d.replaceFile(s.staged, s.live)
}

// keptFile reports whether what a patch moved to staging is a regular
// file, which stays to be written into again, and marks when it left:
// the settle of takeFile counts from its ctime, which renames set on
// Linux, and which the new times set on any system.
func (d dest) keptFile(path string) bool {
	// Looked at and touched through the tree, as it was moved there.
	info, err := d.lstat(path)
	if err != nil || !info.Mode().IsRegular() {
		return false
	}
	// A file of other names (a hard link planted as the live file) keeps
	// its times: they are the other name's too, and takeFile never takes
	// such a file.
	if n, ok := platform.Links(info); ok && n != 1 {
		return true
	}
	now := time.Now()
	_ = d.chtimes(path, now, now)
	return true
}
