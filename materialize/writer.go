package materialize

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skillsync/skillsync/internal/platform"
	"github.com/skillsync/skillsync/skill"
)

// Skill is one skill to write.
type Skill struct {
	Name  string
	Files fs.FS
	// List is the files to write, from skill.ListFiles; nil lists Files
	// with skill.ListFiles when the skill is looked at, so a caller that
	// has no listing at hand pays for one only then.
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
	Meta []byte
}

// Stats counts what a run wrote.
type Stats struct {
	Written      int   `json:"written"`
	Unchanged    int   `json:"unchanged"`
	Removed      int   `json:"removed"`
	BytesWritten int64 `json:"bytes_written"`
}

func (s *Stats) add(o Stats) {
	s.Written += o.Written
	s.Unchanged += o.Unchanged
	s.Removed += o.Removed
	s.BytesWritten += o.BytesWritten
}

// writer assembles changed skills in a staging directory and swaps them
// into place together in commit.
//
// File contents stream (stage.go): a stager reads each file of a skill
// from its source in chunks, hashing as it goes, and hands the chunks of
// a file that must be written to a build goroutine, which writes them
// into staging (build.go). Up to parallelStages skills are read at once
// (inflating and hashing is CPU), and up to parallelBuilds written
// (creating files is kernel time, and on these machines most of a cold
// sync). A few chunks per build at most are in memory, whatever the
// size of a skill.
type writer struct {
	staging string
	// dest is the destination folder held open: every change below it
	// goes through it (dest.go).
	dest dest
	// check says how far recorded state is trusted. CheckHash hashes
	// every live file instead of trusting its stat data, and counts files
	// nobody recorded as differences.
	check Check
	// marker is the file written before the first change of a live entry
	// and removed (clean) once the destination's record says what is
	// live. unclean is set when it was there at the start: a run stopped
	// halfway, and no record is trusted without a stat check.
	marker  string
	unclean bool
	marked  bool
	// markBody, when set, is what the marker holds (a target's pending
	// entries, pendingMark); else a line for a person.
	markBody []byte
	// leftovers are the files of the marker's folder whose temporary
	// files a run stopped halfway may have left (sweep).
	leftovers []string
	// keepMarker keeps the marker past this run: an exchange is left for
	// the next run to recover (a swap failed and left its journal, or one
	// an older version left was found).
	keepMarker bool
	// keepOld leaves the versions swapped out in staging, for the next run
	// to remove, instead of removing them at once: a reader that opened an
	// old directory just before the swap can finish reading it.
	keepOld bool
	// rules are what the destination's file system cannot hold
	// (portable.go).
	rules fsRules

	slots   chan struct{} // one token per running build
	free    chan *[]byte  // chunks to reuse
	builds  sync.WaitGroup
	tidying sync.WaitGroup // the removal of what staging held
	listed  sync.Once      // staging read (list)

	mu      sync.Mutex // guards stats, pending, pool, files and sized while builds run
	stats   Stats
	pending []*swap
	// pool are folders left in staging by an earlier run, to build in
	// once they have been out of use for settle. take looks at each when
	// it comes to it: a run that builds nothing (a sync with nothing new)
	// stats none of them, where staging holds up to maxPool.
	pool []string
	// files are files left in staging by an earlier run's patches (the
	// versions they replaced, kept by keepOld), for a patch to write its
	// new content into once they have been out of use for settle
	// (takeFile). sized are the ones takeFile looked at and passed over,
	// by how many blocks they take.
	files  []string
	sized  map[int64][]string
	settle time.Duration
	// misses counts the kept files takeFile found not settled since it
	// last found one settled (fileMisses).
	misses int
	// stat is staging held open to lstat its entries by name (a whole
	// path costs the kernel a lookup of every folder on it), from the
	// first list until tidy; nil where it would not open.
	stat *os.Root
}

// parallelBuilds is how many skills are written to staging at once: one
// per two cores, up to 4. Creating files is kernel time, and builds
// running side by side contend for the file system's inode allocation:
// on a 2-core machine four builds took 2 to 4 s more system time in a
// cold sync of the medium benchmark corpus than one, for no less wall
// time (docs/performance.md, round six).
func parallelBuilds() int { return max(1, min(4, runtime.NumCPU()/2)) }

const (
	// chunkSize is the unit file contents are read, hashed and written in.
	chunkSize = 64 << 10
	// queueLen chunks at most wait for each build.
	queueLen = 8
)

// swap is one staged entry waiting for commit to put it in place.
type swap struct {
	staged, live string
	// aside, when set, is where the live entry is moved before staged
	// takes its place: a user's edited copy, kept.
	aside string
	// failed, when not nil, is told that the swap could not be made; live
	// is then as it was, unless a step that undoes another failed too, and
	// changed is set.
	failed  func(error)
	changed bool
	// patch is set for one file of a skill patched in place (patch.go):
	// live is that file, staged its new content, or remove is set (and
	// staged, when set, is where the removed file goes). exchange: the
	// live file is there and goes to staged as the new one takes its
	// place.
	patch, remove, exchange bool
}

// newWriter returns a writer that builds in staging, which must be on the
// same file system as the destinations. What staging holds is left over
// from an earlier run: the versions it swapped out, or an interrupted
// run's work. Its folders are kept to be recycled as the folders of new
// builds (see take): removing a folder costs the file system far more
// than emptying one, and a skill's next version mostly has the same
// folders. A folder is recycled only once it has been out of use for
// settle; folders past maxPool, and anything else, are removed in the
// background once a build first asks for a folder or a file (list): call
// tidy before the staging folder itself goes. marker is the
// destination's mark of a run that stopped halfway.
func newWriter(staging, marker string, settle time.Duration) (*writer, error) {
	return newWriterIn(nil, staging, marker, settle)
}

// newWriterIn is newWriter for a destination held open as tree, which
// staging and marker are in: what the writer changes there goes through
// tree (dest).
func newWriterIn(tree *platform.Tree, staging, marker string, settle time.Duration) (*writer, error) {
	_, err := os.Lstat(marker)
	w := &writer{
		staging: staging,
		dest:    dest{tree},
		marker:  marker,
		unclean: !errors.Is(err, fs.ErrNotExist),
		rules:   hostRules(),
		slots:   make(chan struct{}, parallelBuilds()),
		free:    make(chan *[]byte, parallelBuilds()*(queueLen+1)+1),
		settle:  settle,
	}
	if err := w.dest.stagingDir(staging); err != nil {
		return nil, err
	}
	// Every patch's swap and kept file goes through staging: resolved
	// once, not for each call.
	if err := w.dest.pin(staging); err != nil {
		return nil, err
	}
	if w.unclean {
		// A run stopped halfway. Where it swapped by two renames and
		// stopped between them, the old version goes back first
		// (exchange.go): every exchange is made under the marker, and a
		// run that could not finish one leaves the marker (commit).
		if _, err := recoverExchanges(w.dest, staging); err != nil {
			return nil, err
		}
		w.list()
	}
	return w, nil
}

// recoverUnmarked recovers the exchanges staging holds where the marker
// is not there to say so (a destination an older build wrote), as a
// writer that found the marker did, and reads staging. A run that put
// something back trusts no record, as after a crash: what it put back is
// checked.
func (w *writer) recoverUnmarked() error {
	if w.unclean {
		return nil // done by newWriter
	}
	restored, err := recoverExchanges(w.dest, w.staging)
	if err != nil {
		return err
	}
	if len(restored) > 0 {
		w.unclean = true
	}
	w.list()
	return nil
}

// list reads what staging holds, once: the folders and files to recycle,
// and what is to be removed. A run that builds nothing (a sync with
// nothing new) never reads it: staging holds up to maxPool folders and
// maxFilePool files, and reading them was a sixth of such a sync in a
// new process. take and takeFile call it before their first look.
func (w *writer) list() { w.listed.Do(w.readStaging) }

// readStaging sorts what staging holds into the pools and what is to be
// removed, and starts the removal. A journal of an exchange found here
// without the marker (a build that marks the manifest leaves none so;
// the cache of an older one is recovered when opened) stays, with the
// old version it names, and the marker is set, for the next run to
// recover them before it looks at anything: a run that has planned its
// changes must not have a live entry put back under it.
func (w *writer) readStaging() {
	entries, err := os.ReadDir(w.staging)
	if err != nil {
		return // nothing to recycle: builds make new folders
	}
	w.stat = openRootDir(w.staging)
	keep := map[string]bool{}
	for _, e := range entries {
		if name := e.Name(); strings.HasSuffix(name, journalSuffix) && e.Type().IsRegular() {
			keep[name] = true
			keep[strings.TrimSuffix(name, journalSuffix)+oldSuffix] = true
		}
	}
	if len(keep) > 0 && w.markLive() == nil {
		w.mu.Lock()
		w.keepMarker = true
		w.mu.Unlock()
	}
	var remove, dirs []string
	for _, e := range entries {
		switch name := e.Name(); {
		case keep[name]:
		case e.IsDir():
			dirs = append(dirs, name)
		case e.Type().IsRegular() && strings.HasSuffix(name, patchSuffix) && len(w.files) < maxFilePool:
			w.files = append(w.files, filepath.Join(w.staging, name))
		default:
			remove = append(remove, name)
		}
	}
	// Up to maxPool folders, take looks at each when a build asks for
	// one. Past that, which are kept is decided here, by settling: the
	// first maxPool that have settled, the other settled ones removed.
	// A folder swapped out moments ago is neither recycled nor removed
	// by this run: a reader may still be in it, and must see it whole or
	// lose it, never see it filled with another skill's files.
	for _, name := range dirs {
		path := filepath.Join(w.staging, name)
		switch {
		case len(dirs) <= maxPool:
			w.pool = append(w.pool, path)
		case !w.settled(path):
		case len(w.pool) < maxPool:
			w.pool = append(w.pool, path)
		default:
			remove = append(remove, name)
		}
	}
	if len(remove) > 0 {
		w.tidying.Add(1)
		go func() {
			defer w.tidying.Done()
			for _, name := range remove {
				_ = w.dest.removeAll(filepath.Join(w.staging, name))
			}
		}()
	}
}

// maxPool is how many folders left in staging are kept for recycling.
const maxPool = 1024

// maxFilePool is how many files left in staging are kept for patches to
// write into; past it they are removed.
const maxFilePool = 4096

// patchSuffix ends the name of a patch's file in staging, and of the
// file a patch replaced, which stays there to be written into again.
const patchSuffix = ".patch"

// recycleAfter is how long a folder of the cache's staging must have
// been out of use (swapped out, by its ctime) before it is recycled.
// Readers take milliseconds; syncs come minutes apart.
const recycleAfter = time.Minute

// settled reports whether the folder at path was last moved or changed
// more than settle ago, and is this user's: a folder someone else put in
// staging is not built in, to go live as theirs.
func (w *writer) settled(path string) bool {
	info, err := w.lstat(path)
	return err == nil && info.IsDir() && platform.OwnedByMe(info) && time.Since(changedAt(info)) > w.settle
}

// openRootDir opens the folder at path as a Root, nil when path is no
// folder, a link to one, or was changed for one while it opened.
func openRootDir(path string) *os.Root {
	info, err := os.Lstat(path)
	if err != nil || !info.IsDir() {
		return nil
	}
	root, err := os.OpenRoot(path)
	if err != nil {
		return nil
	}
	if opened, err := root.Stat("."); err != nil || !os.SameFile(info, opened) {
		root.Close()
		return nil
	}
	return root
}

// lstat is os.Lstat of path, by name from staging held open when path is
// an entry of staging.
func (w *writer) lstat(path string) (fs.FileInfo, error) {
	if dir, name := filepath.Split(path); w.stat != nil && filepath.Clean(dir) == w.staging {
		return w.stat.Lstat(name)
	}
	return os.Lstat(path)
}

// take returns a folder left in staging to build in, or "" when none that
// has settled is left. One that has not is passed over for this run.
func (w *writer) take() string {
	w.list()
	for {
		dir, ok := w.pop(&w.pool)
		if !ok || w.settled(dir) {
			return dir
		}
	}
}

// pop takes the last path off list, one of the writer's pools, under its
// lock; false when the list is empty.
func (w *writer) pop(list *[]string) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(*list) == 0 {
		return "", false
	}
	last := (*list)[len(*list)-1]
	*list = (*list)[:len(*list)-1]
	return last, true
}

// takeFile returns a file left in staging for a patch of size bytes to
// write into, opened at its start with its old content, and its path;
// nil when none is fit. Writing into a file a patch replaced, rather
// than creating one, costs the file system no new inode, and the
// replaced one none freed: on ext4 without a journal every inode
// allocated walks past each one freed in the last minute or more, and in
// a daemon's 1% sync on our machine that walk was a third of the sync's
// CPU. A file is fit once it has been out of use for settle (by its
// ctime: the exchange that put it in staging set it) and has no other
// name: a file also linked from elsewhere (a folder in staging, a
// target) keeps that content. It must be this user's, without set-id or
// sticky bits, to go live. One that is not fit is left, or removed when
// it never will be.
//
// The patch writes over the old content and cuts what is left past its
// end. takeFile hands out a file that takes no more blocks than size
// does, so that nothing is cut off: on ext4 mounted with discard every
// block freed is discarded there and then, 135 to 165 us each on our
// machine. It looks first among the files it passed over before (kept
// by their block count), then at the ones not looked at yet until it has
// set aside fileLooks too long (one not settled is dropped for the run
// and not counted), and with none that short takes the shortest longer
// one: a cut is one discard, still cheaper than a new inode. Emptying
// the file first would also cost a write-back when it is closed (ext4's
// auto_da_alloc takes a file emptied and written again for a
// replacement).
func (w *writer) takeFile(size int64) (*os.File, string) {
	w.list()
	want := blocks(size)
	// One looked at before that takes no more blocks, the longest such.
	for {
		name, ok := w.popSized(func(n, best int64) bool { return n <= want && (best == 0 || n > best) })
		if !ok {
			break
		}
		if f, _ := w.openFit(name, want); f != nil {
			return f, name
		}
	}
	// One not looked at yet; each too long is set aside by its size.
	// One not settled is dropped for this run, as before, and not counted.
	for longer := 0; longer < fileLooks && !w.missedEnough(); {
		name, ok := w.pop(&w.files)
		if !ok {
			break
		}
		f, aside := w.openFit(name, want)
		if f != nil {
			return f, name
		}
		if aside {
			longer++
		}
	}
	// None that short: a longer one, the shortest such.
	for {
		name, ok := w.popSized(func(n, best int64) bool { return best == 0 || n < best })
		if !ok {
			return nil, ""
		}
		if f, _ := w.openFit(name, math.MaxInt64); f != nil {
			return f, name
		}
	}
}

// fileLooks is how many kept files too long for a patch takeFile sets
// aside, of those not looked at before, before it takes a longer one.
const fileLooks = 8

// fileMisses is how many kept files in a row, none settled among them,
// takeFile looks at before it looks at no more of them for the run.
// Syncs seconds apart (a burst of them, the benchmark's) leave staging
// full of files not settled yet, and every one was looked at, for
// nothing: in the medium benchmark's rounds, 168 lstats in the second
// 1% sync after a cold one, 846 in the sixth, 1,524 in the tenth. Staging
// lists its files in no order of age, so a run that finds settled ones
// among them meets such a row by chance only.
const fileMisses = 32

// missedEnough reports whether takeFile has found fileMisses files in a
// row not settled.
func (w *writer) missedEnough() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.misses >= fileMisses
}

// blocks is how many 4 KiB blocks size bytes take.
func blocks(size int64) int64 { return max(size, 0)/4096 + min(max(size, 0)%4096, 1) }

// openFit opens the kept file at path for writing when it is fit
// (fitFile) and takes no more than want blocks. One fit but longer is
// set aside, by its blocks, for a longer patch, and aside says so.
func (w *writer) openFit(path string, want int64) (f *os.File, aside bool) {
	info := w.fitFile(path)
	if info == nil {
		return nil, false
	}
	if n := blocks(info.Size()); n > want {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.sized == nil {
			w.sized = map[int64][]string{}
		}
		w.sized[n] = append(w.sized[n], path)
		return nil, true
	}
	return w.dest.openKept(path, info), false
}

// popSized takes a path off the set-aside files whose block count better
// picks over the best so far (0: none yet); false when none is picked.
func (w *writer) popSized(better func(n, best int64) bool) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var best int64
	for n := range w.sized {
		if better(n, best) {
			best = n
		}
	}
	if best == 0 {
		return "", false
	}
	paths := w.sized[best]
	last := paths[len(paths)-1]
	if len(paths) == 1 {
		delete(w.sized, best)
	} else {
		w.sized[best] = paths[:len(paths)-1]
	}
	return last, true
}

// fitFile reports what the file at path is when takeFile may hand it
// out, nil when not: one that never will be is removed.
func (w *writer) fitFile(path string) fs.FileInfo {
	info, err := w.lstat(path)
	if err != nil {
		return nil
	}
	if !info.Mode().IsRegular() || !platform.OwnedByMe(info) || info.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 {
		_ = w.dest.removeAll(path)
		return nil
	}
	if n, ok := platform.Links(info); !ok || n != 1 {
		_ = w.dest.remove(path)
		return nil
	}
	settled := time.Since(changedAt(info)) > w.settle
	w.mu.Lock()
	if settled {
		w.misses = 0
	} else {
		w.misses++
	}
	w.mu.Unlock()
	if !settled {
		return nil
	}
	return info
}

// openKept opens the kept file at path for writing, when it is still the
// file fitFile looked at (info) and has no other name.
func (d dest) openKept(path string, info fs.FileInfo) *os.File {
	f, err := d.openFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil
	}
	opened, err := f.Stat()
	if n, ok := platform.Links(opened); err != nil || !os.SameFile(info, opened) || !ok || n != 1 {
		f.Close()
		return nil
	}
	return f
}

// tidy waits for the removal of what staging held at the start, and
// lets staging's descriptor go. No listing starts after it (one under
// way ends first, its removal counted): a run that never read staging
// has nothing to wait for.
func (w *writer) tidy() {
	w.listed.Do(func() {})
	w.tidying.Wait()
	if w.stat != nil {
		w.stat.Close()
		w.stat = nil
	}
}

// stagingDir makes path a real directory. Anything else in its place, a
// symbolic link included, is removed (the link itself, never its
// target).
func (d dest) stagingDir(path string) error {
	if info, err := os.Lstat(path); err == nil && info.IsDir() {
		return nil
	}
	return d.replaceWithDir(path)
}

// chunk returns a buffer of chunkSize bytes.
func (w *writer) chunk() *[]byte {
	select {
	case b := <-w.free:
		return b
	default:
		b := make([]byte, chunkSize)
		return &b
	}
}

// recycle gives a chunk back; nil is ignored.
func (w *writer) recycle(b *[]byte) {
	if b == nil {
		return
	}
	select {
	case w.free <- b:
	default:
	}
}

// replaceWithDir makes path an empty directory, removing what was there.
// A symbolic link is removed, never followed.
func (d dest) replaceWithDir(path string) error {
	if err := d.removeAll(path); err != nil {
		return fmt.Errorf("empty %s: %w", path, err)
	}
	if err := d.mkdir(path, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	return nil
}

// ensureDir makes path a real directory: a symbolic link or a file in its
// place is removed, so nothing written below it can land elsewhere. A
// folder there already, by the time it is made, is one the writes below
// it meet through the tree, a link there refused.
func (d dest) ensureDir(path string) error {
	info, err := os.Lstat(path)
	switch {
	case err == nil && info.IsDir():
		return nil
	case err == nil:
		if err := d.remove(path); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if err := d.mkdir(path, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// trusts reports whether a record may be taken as what is live without a
// look at the files.
func (w *writer) trusts() bool { return w.check == CheckRecord && !w.unclean }

// hashes reports whether every live file is hashed, stat data ignored.
func (w *writer) hashes() bool { return w.check == CheckHash }

// markLive writes the marker before the first change of a live entry.
func (w *writer) markLive() error {
	_, err := w.mark(true)
	return err
}

// mark writes the marker, flushed on its own when flush is set, unless
// this run wrote it already; wrote says whether this call did. A caller
// that does not flush it flushes the file system before any live entry
// changes.
func (w *writer) mark(flush bool) (wrote bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.marked {
		return false, nil
	}
	// Its leftovers are swept by then: here, or as the cache opened.
	w.sweep()
	body := w.markBody
	if body == nil {
		body = []byte("a sync is changing this folder; if it stopped halfway, the next one checks every file\n")
	}
	write := w.dest.writeFile
	if !flush {
		write = w.dest.writeFileUnflushed
	}
	if err := write(w.marker, body, 0o644); err != nil {
		return false, fmt.Errorf("mark the change: %w", err)
	}
	w.marked = true
	return true, nil
}

// sweep removes the temporary files of the leftovers' names in the
// marker's folder, which only a run holding its lock writes.
func (w *writer) sweep() {
	if len(w.leftovers) > 0 {
		w.dest.sweep(filepath.Dir(w.marker), w.leftovers...)
	}
}

// clean removes the marker: the record now says what is live.
func (w *writer) clean() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.keepMarker || (!w.marked && !w.unclean) {
		return nil
	}
	if err := w.dest.remove(w.marker); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", w.marker, err)
	}
	w.marked, w.unclean = false, false
	return nil
}

func (w *writer) count(st Stats) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stats.add(st)
}

// Stats returns what was written so far.
func (w *writer) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stats
}

// statMatches reports whether live is a real directory (not a link),
// every recorded file of it still has the size, mtime and mode it was
// written with, and it holds no file the record does not know: a patch
// that added one file (patch.go) and stopped before its record was
// written changed no recorded file.
func statMatches(live string, rec *SkillRecord) bool {
	if !realDir(live) {
		return false
	}
	for path, f := range rec.Files() {
		info, err := os.Lstat(filepath.Join(live, filepath.FromSlash(path)))
		if err != nil || !info.Mode().IsRegular() || info.Size() != f.Size ||
			info.ModTime().UnixNano() != f.MTime || !samePerm(info.Mode(), f.Perm()) {
			return false
		}
	}
	return len(extraFiles(live, rec.Files())) == 0
}

// fileMode is 0755 for executables and 0644 for the rest. head is the
// start of the content, which decides when modes are guessed.
func fileMode(m fs.FileMode, head []byte, guess bool) fs.FileMode {
	exec := m&0o111 != 0
	if guess {
		exec = len(head) >= 2 && head[0] == '#' && head[1] == '!'
	}
	if exec {
		return 0o755
	}
	return 0o644
}

// liveFile returns the stat data and content hash of a live file, or nil
// when it is not a regular file. The hash comes from the record when the
// stat data still match it, unless the writer hashes everything.
func (w *writer) liveFile(path string, rec *FileRecord) (fs.FileInfo, Hash) {
	info, err := os.Lstat(path)
	if err != nil {
		return nil, Hash{}
	}
	return w.liveHash(path, info, rec)
}

// liveHash is liveFile for a file already lstat'ed as info.
func (w *writer) liveHash(path string, info fs.FileInfo, rec *FileRecord) (fs.FileInfo, Hash) {
	if !info.Mode().IsRegular() {
		return nil, Hash{}
	}
	if rec != nil && !w.hashes() && info.Size() == rec.Size && info.ModTime().UnixNano() == rec.MTime && w.rules.permMatches(info.Mode(), rec.Perm()) {
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
	f, err := platform.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return Hash{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return Hash{}, fmt.Errorf("%s is not a regular file", path)
	}
	return hashReader(f)
}

// edited reports whether a live copy holds something the user made,
// which the last run did not record for it: a file changed or added, or
// the directory replaced by something else. A missing copy is not
// edited, nor is a file gone from it: a copy that only lacks files
// skillsync wrote holds nothing of the user's to keep (moved aside, it
// would be an empty folder that waits for a person).
func (w *writer) edited(live string, rec *SkillRecord) bool {
	info, err := os.Lstat(live)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err != nil || !info.IsDir() {
		return true
	}
	for path, f := range rec.Files() {
		p := filepath.Join(live, filepath.FromSlash(path))
		info, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return true // a file where its folder was, say
		}
		// Hashed, stat data not trusted: an edit that kept a file's size
		// and time (a tool restoring times, a coarse clock) would
		// otherwise be lost. Only a copy about to be replaced or removed
		// is looked at.
		info, sha := w.liveHash(p, info, nil)
		if info == nil || sha != f.SHA256 || !w.rules.permMatches(info.Mode(), f.Perm()) {
			return true
		}
	}
	return len(w.rules.extraFiles(live, rec.Files())) > 0
}

// realDir reports whether path is a directory and not a symbolic link.
func realDir(path string) bool {
	info, err := os.Lstat(path)
	return err == nil && info.IsDir()
}

func randomName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// remove takes a live skill directory, or a symbolic link in its place
// (the link itself, never its target), out of the destination with one
// rename, so a reader sees it whole or not at all, then deletes it (or,
// with keepOld, leaves that to the next run). It counts the files
// recorded for it.
func (w *writer) remove(live string, rec *SkillRecord) error {
	return w.moveOut(live, filepath.Join(w.staging, randomName()), rec, !w.keepOld)
}

// moveOut renames live to dest and, when del is set, deletes it there.
// Staging is read first (list): a build's later first look must not take
// what this run moved there for an earlier run's leftover.
func (w *writer) moveOut(live, dest string, rec *SkillRecord, del bool) error {
	w.list()
	if err := w.markLive(); err != nil {
		return err
	}
	if err := w.dest.rename(live, dest); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", live, err)
	}
	if del {
		if err := w.dest.removeAll(dest); err != nil {
			return fmt.Errorf("remove %s: %w", live, err)
		}
	}
	if rec != nil {
		w.count(Stats{Removed: rec.fileCount()})
	}
	return nil
}

// queue adds a staged entry for commit.
func (w *writer) queue(s *swap) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending = append(w.pending, s)
}

// commit makes everything staged durable with one syncfs, then swaps each
// entry into place and removes the old versions. A crash at any point
// leaves every live directory whole: old before its swap, new after.
// Once the swaps begin they all run, even if ctx is cancelled meanwhile:
// they are renames, quick, and stopping halfway would leave the record
// behind the files. A swap that fails leaves its live entry as it was,
// tells its owner, and is in failed; the others go on. err is for what
// stopped commit before any swap: nothing changed then.
func (w *writer) commit(ctx context.Context) (failed, err error) {
	failed, tell, err := w.swapAll(ctx)
	tell()
	return failed, err
}

// swapAll is commit, except that the owners of the swaps that failed are
// told when the caller calls tell, not before: Cache.Commit writes the
// records while the swaps run, and telling an owner changes its record.
func (w *writer) swapAll(ctx context.Context) (failed error, tell func(), err error) {
	var told []func()
	tell = func() {
		for _, f := range told {
			f()
		}
	}
	// Every build has ended: their owners waited for them.
	w.builds.Wait()
	if len(w.pending) == 0 {
		return nil, tell, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, tell, err
	}
	// Where the one flush of the staged files covers every change of the
	// file system, the marker goes to the disk with them rather than by
	// two flushes of its own (2.5 to 3 ms of a 1% sync here). Not over a
	// marker found at the start: a target's lists what a run that stopped
	// was putting live, and is replaced only by one whole on the disk.
	early := false
	if syncFSCoversDirs && !w.unclean {
		var err error
		if early, err = w.mark(false); err != nil {
			return nil, tell, err
		}
	}
	// A commit that stops here changed nothing live: a marker it wrote
	// goes again, and the next run need not check every file.
	stopped := func(err error) (error, func(), error) {
		if early {
			_ = w.clean()
		}
		return nil, tell, err
	}
	if err := w.dest.syncFS(w.staging); err != nil {
		return stopped(err)
	}
	if err := ctx.Err(); err != nil {
		return stopped(err)
	}
	if err := w.markLive(); err != nil {
		return nil, tell, err
	}
	parents := map[string]bool{}
	var errs []error
	for _, s := range w.pending {
		if err := w.swapIn(s); err != nil {
			err = fmt.Errorf("swap in %s: %w", s.live, err)
			if s.failed != nil {
				told = append(told, func() { s.failed(err) })
			}
			errs = append(errs, err)
			w.afterFailure(s)
			continue
		}
		parents[filepath.Dir(s.live)] = true
		if s.aside != "" {
			parents[filepath.Dir(s.aside)] = true
		}
	}
	w.pending = nil
	if err := w.dest.syncDirs(w.staging, parents); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...), tell, nil
}

// afterFailure keeps the marker when the failed swap s may have left its
// live entry other than it was: a step that undoes another failed too
// (changed), or it left the journal of a two-rename exchange
// (exchange.go), the live entry perhaps missing. The next run then
// recovers it and checks every file, as after a crash. A swap that
// failed at its first step changed nothing, and a run that goes on
// trusting the records loses nothing.
func (w *writer) afterFailure(s *swap) {
	keep := s.changed
	if !keep && !s.patch && s.aside == "" {
		_, err := os.Lstat(s.staged + journalSuffix)
		keep = err == nil
	}
	if keep {
		w.mu.Lock()
		w.keepMarker = true
		w.mu.Unlock()
	}
}

// swapIn puts one staged entry in place.
func (w *writer) swapIn(s *swap) error {
	if s.patch {
		return w.dest.swapPatch(s)
	}
	if s.aside != "" {
		// The user's copy first goes where it is kept, by one rename; only
		// then does the new version take its place.
		if err := w.dest.rename(s.live, s.aside); err != nil {
			return fmt.Errorf("keep the edited copy as %s: %w", s.aside, err)
		}
		if err := w.dest.rename(s.staged, s.live); err != nil {
			s.changed = w.dest.rename(s.aside, s.live) != nil
			return err
		}
		return nil
	}
	old, err := w.dest.exchangeIn(s.staged, s.live)
	if err != nil {
		return err
	}
	if old != "" && !w.keepOld {
		if err := w.dest.removeAll(old); err != nil {
			s.changed = true // the new version is live all the same
			return fmt.Errorf("remove old copy: %w", err)
		}
	}
	return nil
}

// manyDirs is how many changed folders commit flushes one by one at most
// before one syncFS does it: a 1% sync patches files in hundreds of
// folders, and each fsync waits for the disk on its own.
const manyDirs = 8

// syncDirs makes the entries of dirs durable: an fsync of each, or one
// syncFS of the file system holding staging when there are many and it
// covers them.
func (d dest) syncDirs(staging string, dirs map[string]bool) error {
	if syncFSCoversDirs && len(dirs) > manyDirs {
		return d.syncFS(staging)
	}
	var errs []error
	for _, p := range slices.Sorted(maps.Keys(dirs)) {
		if err := d.syncDir(p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
