package materialize

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/internal/flock"
	"github.com/skillsync/skillsync/internal/jsonfile"
	"github.com/skillsync/skillsync/internal/platform"
)

// ManifestName is the manifest's file in a cache root, for readers that
// watch it change.
const ManifestName = ".manifest.json"

// The names skillsync keeps in a cache root besides the source folders.
const (
	lockName     = ".lock"
	manifestName = ManifestName
	stagingName  = ".staging"
	// dirtyName is written before a sync first changes a live directory
	// and removed once the manifest says what is live: found by the next
	// sync, it says a sync stopped halfway, so no record is trusted
	// without a stat check.
	dirtyName = ".dirty"
)

// TargetsName is the file in a cache root that lists the target folders
// the last sync kept (package targets writes it).
const TargetsName = ".targets.json"

// SyncsName is the file in a cache root that says how each source fared
// in the workspace's syncs (package syncrun writes it under the cache's
// lock, package status reads it).
const SyncsName = ".syncs.json"

// Dirty reports whether the cache at root is marked as a sync stopped
// halfway (a sync in progress marks it too).
func Dirty(root string) bool {
	_, err := os.Lstat(filepath.Join(root, dirtyName))
	return err == nil
}

// Check is how closely a sync looks at what a record says is in place
// before it trusts it.
type Check uint8

const (
	// CheckRecord trusts the record: a source at its recorded revision
	// and fingerprint is current, and a skill whose content did not
	// change is in place, without a look at a file. The cache is
	// skillsync's own; a target copy is checked for edits when it is
	// about to be rewritten. After a sync that stopped halfway, a stat
	// check is made instead.
	CheckRecord Check = iota
	// CheckStat compares every recorded file's size, mtime and mode with
	// the live one (lstat), and looks at what differs.
	CheckStat
	// CheckHash hashes every live file and trusts no stat data: what
	// sync --verify and repair do.
	CheckHash
)

// ErrLocked is returned when another sync holds the cache.
var ErrLocked = flock.ErrLocked

// ErrCorrupt is wrapped by the error for a record file (a manifest, a
// target record) that must not be used: not JSON, an unknown version, a
// name that is not one safe path component.
var ErrCorrupt = jsonfile.ErrCorrupt

// Cache is an open .skills-cache: locked against other syncs, an
// interrupted exchange recovered, its manifest loaded. It is used from
// one goroutine at a time.
type Cache struct {
	root     string
	lock     *flock.Lock
	tree     *platform.Tree // root held open; the writer's dest
	manifest *Manifest
	writer   *writer
	// oldRefs names the records the manifest named when the cache was
	// opened: kept one sync longer for readers that read that manifest.
	oldRefs map[string]bool
	// dirty is set when the manifest changed and must be written.
	dirty bool
	// examined are the sources this sync looked at file by file, or
	// removed: after a sync that stopped halfway, the mark that says so
	// is removed only once every recorded source has been examined.
	examined map[string]bool
	// opened are the warnings of OpenCache.
	opened []string
	// byFingerprint indexes each source's records by skill fingerprint,
	// built on the first Recorded of the source.
	byFingerprint map[string]map[string]string
}

// ChangeOp is what happened to a skill.
type ChangeOp string

// The changes a sync makes to a skill.
const (
	Added   ChangeOp = "added"
	Updated ChangeOp = "updated"
	Removed ChangeOp = "removed"
	// Repaired is a skill whose content did not change but whose cached
	// files did not match their records (sync --check-stat or --verify,
	// verify --repair): they were written again.
	Repaired ChangeOp = "repaired"
)

// Change is one skill added, updated, removed or repaired.
type Change struct {
	Source string   `json:"source"`
	Name   string   `json:"name"`
	Op     ChangeOp `json:"op"`
	Before Hash     `json:"before_hash,omitzero"`
	After  Hash     `json:"after_hash,omitzero"`
}

// Source is one source to materialize, as one value.
type Source struct {
	// Name is the source's folder in the cache: one safe path component.
	Name string
	// Revision is what the source is at (a commit, a content hash); ""
	// when unknown, which makes the source never current.
	Revision string
	// Fingerprint is the caller's digest of every config setting that
	// changes what the source yields (kind, ref, path, strict, limits,
	// filters). A change of it makes the source not current.
	Fingerprint string
	// Discovery is the caller's digest of the settings that decide what a
	// skill's content is read as; see SourceRecord.Discovery.
	Discovery string
	// Skills are the skills to materialize, each name once.
	Skills []Skill
	// Excluded names the skills left out on purpose (archived), sorted.
	Excluded []string
	// Check, when not nil, sees each skill's hash before anything of it
	// is written and can refuse it; a refused skill keeps what it had.
	Check func(name string, hash Hash) error
	// MaxSkillSize, when above zero, caps the bytes of one skill's files
	// together: a bigger skill is not written (a second line of defence
	// behind the source's own limits).
	MaxSkillSize int64
	// Held names the skills the source may still have that the caller
	// could not read this time (Held), or whose new versions are invalid
	// (Invalidated): each keeps what the cache has of it, as a skill whose
	// staging failed does, rather than being removed.
	Held []string
}

// Result is what SyncSource or Prune did, as values the caller owns.
type Result struct {
	Changes []Change
	// Errors are skills (or sources) that could not be written or
	// removed; each kept what it had. A skill's error is a *SkillError.
	Errors []error
	// Warnings are things the user should know that changed nothing,
	// such as entries skillsync did not make.
	Warnings []string
}

// SkillError is one skill that could not be written or removed.
type SkillError struct {
	Source string // "" in a target
	Skill  string
	Path   string // the file, slash-separated, when one file is to blame
	Err    error
}

func (e *SkillError) Error() string {
	msg := "skill " + e.Skill
	if e.Source != "" {
		msg = "source " + e.Source + " " + msg
	}
	if e.Path != "" {
		msg += " file " + e.Path
	}
	return msg + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *SkillError) Unwrap() error { return e.Err }

// OpenCache locks the cache at root, waiting up to wait for another sync
// to finish, and prepares it: an exchange a run left unfinished put
// back (exchange.go), the manifest and every source's skill records
// loaded (file records are loaded when a source is looked at). check says how far recorded state is trusted.
// The lock is held until Close.
func OpenCache(ctx context.Context, root string, wait time.Duration, check Check) (*Cache, error) {
	return openCache(ctx, root, wait, check, recycleAfter, nil)
}

// OpenCacheThen is OpenCache that calls locked once the cache's lock is
// held, before the cache is read: a sync starts its sources' fetches
// there, beside that read, and not while another sync of the workspace
// still reads the stores they write. The function locked returns, when
// not nil, is called if the cache then fails to open, before its lock is
// let go: the sync ends its fetches there.
func OpenCacheThen(ctx context.Context, root string, wait time.Duration, check Check, locked func() (undo func())) (*Cache, error) {
	return openCache(ctx, root, wait, check, recycleAfter, locked)
}

// openCache is OpenCacheThen with the age at which folders left in
// staging are recycled.
func openCache(ctx context.Context, root string, wait time.Duration, check Check, settle time.Duration, locked func() (undo func())) (*Cache, error) {
	// A cache that is a link would have skillsync write and delete
	// wherever it points.
	if err := atomicfile.MkdirNoFollow(root, 0o755); err != nil {
		if info, serr := os.Lstat(root); serr == nil && !info.IsDir() {
			// A file or a link where the cache goes: the cache holds
			// nothing another sync cannot make again.
			return nil, fmt.Errorf("cache: %w: move it away, and the next sync makes the cache folder there", err)
		}
		return nil, fmt.Errorf("cache: %w", err)
	}
	held, err := flock.Acquire(ctx, filepath.Join(root, lockName), wait)
	if err != nil {
		return nil, err
	}
	// A cache that fails to open, or a panic on the way (which the
	// daemon recovers from, and goes on), lets go of what it took: left
	// to the collector, the lock would keep every later sync of the
	// workspace waiting.
	o := &opening{held: held}
	opened := false
	defer func() {
		if !opened {
			o.release()
		}
	}()
	if locked != nil {
		o.undo = locked()
	}
	// Held open from now on: the skills' swaps go into this folder, not
	// through a link another process puts on the way to it.
	if o.tree, err = platform.OpenTree(root); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	// Every writer of these holds the lock: a temporary file of theirs is
	// one a killed sync left.
	dest{o.tree}.sweep(root, manifestName, TargetsName, SyncsName, dirtyName)
	c := &Cache{root: root, lock: held, tree: o.tree, oldRefs: map[string]bool{}, examined: map[string]bool{}}
	if o.w, err = newWriterIn(o.tree, filepath.Join(root, stagingName), filepath.Join(root, dirtyName), settle); err != nil {
		return nil, err
	}
	c.writer = o.w
	c.writer.check = check
	c.writer.keepOld = true
	c.load()
	if c.manifest.unmarked {
		// Written by an older build, which took the marker away after an
		// exchange that failed: recovered now, and the manifest written
		// anew, with its mark, by this sync.
		if err := c.writer.recoverUnmarked(); err != nil {
			return nil, err
		}
		c.dirty = true
	}
	opened = true
	return c, nil
}

// opening is what openCache has taken so far, until the cache is open.
type opening struct {
	held *flock.Lock
	// undo ends what openCache's function started once the lock was held.
	undo func()
	tree *platform.Tree
	w    *writer
}

// release lets go of what o holds, in an order that leaves nothing
// behind: the writer's removal of what staging held (an unclean
// cache's leftovers) goes through the folder held open, and ends before
// it is closed, whose descriptor's number the next folder opened takes;
// then what the function started ends, and the lock goes last.
func (o *opening) release() {
	if o.w != nil {
		o.w.tidy()
	}
	if o.tree != nil {
		o.tree.Close()
	}
	if o.undo != nil {
		o.undo()
	}
	o.held.Close()
}

// load reads the manifest and the skill records of its sources. A source
// whose records cannot be used is dropped from the manifest, with a
// warning: its files are hashed again by the next look at it.
func (c *Cache) load() {
	name := filepath.Join(c.root, manifestName)
	m, legacyFile, err := loadIndex(c.root)
	if err != nil {
		c.opened = append(c.opened, recoverRecord(name, err, "every cached file will be hashed again"))
	}
	c.manifest = m
	if legacyFile {
		// Written as version 3 by this sync, whatever else it does.
		c.dirty = true
		return
	}
	refNames(m, c.oldRefs)
	for _, source := range sortedNames(m.Sources) {
		rec := m.Sources[source]
		if err := rec.loadSkills(c.root); err != nil {
			c.opened = append(c.opened, fmt.Sprintf("the records of source %s cannot be used (%v); its cached files will be hashed again", source, err))
			delete(m.Sources, source)
			c.dirty = true
		} else if rec.filesLost {
			c.opened = append(c.opened, lostWarning(source, rec)) // records of the first version
			c.dirty = true
		} else if rec.skillsRef.IsZero() {
			c.dirty = true // upgraded from the first version: written anew
		}
	}
}

// Recorded returns the name and record, files included, of the skill of
// source whose Fingerprint is fingerprint, when the source was last read
// under discovery settings discovery: what the source yielded the last
// time that content was read that way. ok is false when there is none,
// or when the source's file records cannot be read. The record is the
// cache's own: the caller must not change it.
func (c *Cache) Recorded(source, discovery, fingerprint string) (name string, rec *SkillRecord, ok bool) {
	src := c.manifest.Sources[source]
	if src == nil || fingerprint == "" || discovery == "" || src.Discovery != discovery {
		return "", nil, false
	}
	name, ok = c.fingerprints(source, src)[fingerprint]
	if !ok {
		return "", nil, false
	}
	return name, src.Skills[name], true
}

// fingerprints returns source's skills by fingerprint, its file records
// loaded first; nil when those cannot be read. Built on the first call.
func (c *Cache) fingerprints(source string, src *SourceRecord) map[string]string {
	if src = c.filesOf(source, src); src.filesLost {
		return nil
	}
	if c.byFingerprint == nil {
		c.byFingerprint = map[string]map[string]string{}
	}
	index := c.byFingerprint[source]
	if index == nil {
		index = make(map[string]string, len(src.Skills))
		for name, sk := range src.Skills {
			if sk.Fingerprint != "" {
				index[sk.Fingerprint] = name
			}
		}
		c.byFingerprint[source] = index
	}
	return index
}

// filesOf returns rec with its file records loaded. Records that cannot
// be read are a warning; the source's live files are then hashed again
// (filesLost), never trusted.
func (c *Cache) filesOf(source string, rec *SourceRecord) *SourceRecord {
	if rec.filesLoaded || rec.filesLost {
		return rec
	}
	if err := rec.loadFiles(c.root); err != nil {
		rec.loseFiles(err)
		c.opened = append(c.opened, lostWarning(source, rec))
	}
	return rec
}

// ReadAhead returns, for a source whose file records the cache holds and
// has not read yet, the revision they record and a function that reads
// and checks them, for the sync to call from another goroutine once the
// source's fetch has brought another revision. The discovery that follows
// asks for them at its first skill (Known), and in a source of 10,000
// skills reading them takes some 30 ms that nothing else then runs
// beside; read ahead, they are read while the sync still loads the
// usage and opens the store. read changes no record: the first call of
// the cache that needs them takes what it read, or waits for it. read is
// nil when there is nothing to read ahead.
func (c *Cache) ReadAhead(source string) (revision string, read func()) {
	rec := c.manifest.Sources[source]
	if rec == nil || rec.filesLoaded || rec.filesLost || rec.filesRef.IsZero() {
		return "", nil
	}
	if rec.ahead == nil {
		rec.ahead = newFilesAhead(rec)
	}
	ahead, root := rec.ahead, c.root
	return rec.Revision, func() { _, _ = ahead.read(root) }
}

// lostWarning says that a source's file records cannot be used.
func lostWarning(source string, rec *SourceRecord) string {
	return fmt.Sprintf("the file records of source %s cannot be used (%v); its cached files will be hashed again", source, rec.filesErr)
}

// OpenWarnings are what OpenCache found and the user should know: a
// manifest that was unreadable or set aside.
func (c *Cache) OpenWarnings() []string { return slices.Clone(c.opened) }

// Close waits for the staging area's leftovers to be removed and
// releases the lock.
func (c *Cache) Close() error {
	c.writer.tidy()
	c.tree.Close()
	return c.lock.Close()
}

// Root returns the cache directory.
func (c *Cache) Root() string { return c.root }

// Manifest returns the manifest as it stands.
func (c *Cache) Manifest() *Manifest { return c.manifest }

// Stats returns what was written so far.
func (c *Cache) Stats() Stats { return c.writer.Stats() }

// SkillDir is where a source's skill lives in the cache.
func (c *Cache) SkillDir(source, name string) string {
	return filepath.Join(c.root, source, name)
}

// Current reports whether src (its Name, Revision, Fingerprint and
// Excluded; Skills are not looked at) is cached as recorded: the no-op
// fast path. Under CheckRecord it compares the source's record and looks
// at no file: its cost does not grow with the number of files. Under
// CheckStat, or after a sync that stopped halfway, every recorded file is
// lstat'ed as well; under CheckHash no source is current.
func (c *Cache) Current(src Source) bool {
	rec, ok := c.manifest.Sources[src.Name]
	if !ok || src.Revision == "" || rec.Revision != src.Revision || rec.Fingerprint != src.Fingerprint ||
		c.writer.check == CheckHash || !slices.Equal(rec.Excluded, src.Excluded) {
		return false
	}
	if !c.writer.trusts() {
		if rec = c.filesOf(src.Name, rec); rec.filesLost || !c.statCurrent(src.Name, rec) {
			return false
		}
		c.examined[src.Name] = true
	} else if len(rec.Skills) > 0 && !isDir(filepath.Join(c.root, src.Name)) {
		// The source's folder removed by hand: every read command says
		// "run skillsync sync", and a sync that trusted the record would
		// never bring it back (a daemon's, for 95 syncs of every 96). One
		// lstat a source, whatever its size.
		return false
	}
	c.writer.count(Stats{Unchanged: rec.Files()})
	return true
}

// isDir reports whether path is a directory, not following a link.
func isDir(path string) bool {
	info, err := os.Lstat(path)
	return err == nil && info.IsDir()
}

// statCurrent reports whether every recorded file of a source still has
// the stat data it was written with.
func (c *Cache) statCurrent(source string, rec *SourceRecord) bool {
	// Stat calls are cheap alone and many together: spread them over the
	// cores, and stop at the first file that does not match.
	var stale atomic.Bool
	var g errgroup.Group
	g.SetLimit(2 * runtime.NumCPU())
	for name, sk := range rec.Skills {
		dir := c.SkillDir(source, name)
		g.Go(func() error {
			if !stale.Load() && !statMatches(dir, sk) {
				stale.Store(true)
			}
			return nil
		})
	}
	_ = g.Wait()
	return !stale.Load()
}

// SyncSource stages every skill of src and removes the skills it no
// longer has. Nothing is live until Commit. A skill that cannot be
// staged is an error in the result and keeps what it had; the others go
// on.
func (c *Cache) SyncSource(ctx context.Context, src Source) Result {
	var res Result
	if err := checkName("source", src.Name); err != nil {
		res.Errors = append(res.Errors, err)
		return res
	}
	// A folder removed by hand holds none of what its records say: they
	// are not trusted for it, whatever the check (Current).
	gone := !isDir(filepath.Join(c.root, src.Name))
	if err := c.writer.dest.ensureDir(filepath.Join(c.root, src.Name)); err != nil {
		res.Errors = append(res.Errors, fmt.Errorf("source %s: %w", src.Name, err))
		return res
	}
	old := c.manifest.Sources[src.Name]
	if old == nil {
		// A source the cache never held has no file records to read.
		old = &SourceRecord{Skills: map[string]*SkillRecord{}, filesLoaded: true}
	}
	old = c.filesOf(src.Name, old)
	c.examined[src.Name] = true
	next := &SourceRecord{Revision: src.Revision, Fingerprint: src.Fingerprint, Discovery: src.Discovery, Skills: map[string]*SkillRecord{}, Excluded: src.Excluded, filesLoaded: true}
	fail := func(name string, err error) {
		res.Errors = append(res.Errors, skillError(src.Name, name, err))
	}
	carry := func(prev *SkillRecord) *SkillRecord { return carried(prev, old.Discovery == next.Discovery) }
	type waiting struct {
		name string
		prev *SkillRecord
		st   *staged
	}
	var builds []waiting
	names := newSkillNames(c.writer.rules)
	seen := make(map[string]bool, len(src.Skills))
	var jobs []*stageJob
	for _, s := range src.Skills {
		// A skill refused here is reported in its place among the others;
		// a name refused on its own is not held against the ones after it.
		if err := checkName("skill", s.Name); err != nil {
			jobs = append(jobs, &stageJob{skill: s, refused: err})
			continue
		}
		if err := names.check(s.Name); err != nil {
			jobs = append(jobs, &stageJob{skill: s, refused: err})
			continue
		}
		if seen[s.Name] {
			jobs = append(jobs, &stageJob{skill: s, refused: errors.New("the source yields two skills of this name")})
			continue
		}
		seen[s.Name] = true
		j := &stageJob{skill: s, live: c.SkillDir(src.Name, s.Name), prev: old.Skills[s.Name], opts: stageOptions{maxSize: src.MaxSkillSize}}
		j.compare = j.prev
		if old.filesLost || gone {
			j.compare = nil // its files are not known: hash the live ones
		}
		if src.Check != nil {
			j.opts.check = func(h Hash) error { return src.Check(s.Name, h) }
		}
		jobs = append(jobs, j)
	}
	c.writer.stageAll(ctx, jobs, src.Check == nil)
	for _, j := range jobs {
		name := j.skill.Name
		if j.refused != nil {
			fail(name, j.refused)
			continue
		}
		if j.err != nil {
			fail(name, j.err)
			if j.prev != nil {
				next.Skills[name] = carry(j.prev)
			}
			continue
		}
		next.Skills[name] = j.st.rec
		builds = append(builds, waiting{name, j.prev, j.st})
	}
	// The builds of this source end here, so that what it reports is what
	// will be: a skill whose build failed keeps what it had.
	for _, b := range builds {
		name, prev := b.name, b.prev
		if err := b.st.wait(c.writer, func(error) { c.revert(src.Name, name, carry(prev)) }); err != nil {
			fail(name, err)
			if prev != nil {
				next.Skills[name] = carry(prev)
			} else {
				delete(next.Skills, name)
			}
			continue
		}
		rec := b.st.rec
		switch {
		case prev == nil && !b.st.changed:
			// In place already, its record lost (a manifest set aside):
			// the record is mended, nothing is added.
			res.Changes = append(res.Changes, Change{Source: src.Name, Name: name, Op: Repaired, After: rec.Hash})
		case prev == nil:
			res.Changes = append(res.Changes, Change{Source: src.Name, Name: name, Op: Added, After: rec.Hash})
		case prev.Hash != rec.Hash || (b.st.changed && !sameModes(prev, rec)):
			// A file's mode is not in the skill hash: one that changed
			// upstream is an update all the same.
			res.Changes = append(res.Changes, Change{Source: src.Name, Name: name, Op: Updated, Before: prev.Hash, After: rec.Hash})
		case b.st.changed:
			res.Changes = append(res.Changes, Change{Source: src.Name, Name: name, Op: Repaired, Before: prev.Hash, After: rec.Hash})
		}
	}
	for _, name := range sortedNames(old.Skills) {
		if _, keep := next.Skills[name]; keep {
			continue
		}
		if slices.Contains(src.Held, name) {
			next.Skills[name] = carry(old.Skills[name])
			continue
		}
		if err := c.writer.remove(c.SkillDir(src.Name, name), old.Skills[name]); err != nil {
			fail(name, err)
			next.Skills[name] = carry(old.Skills[name])
			continue
		}
		res.Changes = append(res.Changes, Change{Source: src.Name, Name: name, Op: Removed, Before: old.Skills[name].Hash})
	}
	if len(res.Errors) > 0 {
		// The source is not fully at revision: the next sync must look again.
		next.Revision = ""
	}
	c.manifest.Sources[src.Name] = next
	delete(c.byFingerprint, src.Name)
	c.dirty = true
	res.Warnings = foreign(filepath.Join(c.root, src.Name), func(name string) bool { return next.Skills[name] != nil })
	return res
}

// sameModes reports whether rec gives every file the mode prev recorded
// for it (both of one skill hash, so of the same files).
func sameModes(prev, rec *SkillRecord) bool {
	before := prev.Files()
	if len(before) == 0 {
		return true // the records were lost: the same hash is all there is
	}
	for path, f := range rec.Files() {
		if p, ok := before[path]; !ok || p.Mode != f.Mode {
			return false
		}
	}
	return true
}

// carried is prev as the record of a source read anew keeps it, when the
// sync could not replace it: the same, unless the source was read under
// other discovery settings (same is false), where it loses its
// fingerprint. A record that kept it would tell Known and Recalled that
// these settings found what the others did: a skill that Strict now
// refuses, whose removal failed, would be taken from it by a later sync
// as valid.
func carried(prev *SkillRecord, same bool) *SkillRecord {
	if prev == nil || same || prev.Fingerprint == "" {
		return prev
	}
	return newSkillRecord(prev.Hash, "", prev.Meta, prev.Files())
}

// revert puts a skill's record back as it was when its new version could
// not be swapped in at commit, and makes the next sync look at the source
// again.
func (c *Cache) revert(source, name string, prev *SkillRecord) {
	rec := c.manifest.Sources[source]
	if rec == nil {
		return
	}
	if prev != nil {
		rec.Skills[name] = prev
	} else {
		delete(rec.Skills, name)
	}
	rec.Revision = ""
	rec.skillsRef, rec.filesRef = Hash{}, Hash{}
}

// skillError names the source, skill and, where known, file of err.
func skillError(source, name string, err error) *SkillError {
	e := &SkillError{Source: source, Skill: name, Err: err}
	var fe *fileError
	if errors.As(err, &fe) {
		e.Path, e.Err = fe.path, fe.err
	}
	return e
}

// foreign warns of the entries of dir that skillsync did not make, but
// for what a file browser leaves there (osLitter).
func foreign(dir string, known func(name string) bool) []string {
	var out []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !known(e.Name()) && (e.IsDir() || !osLitter(dir, e.Name())) {
			out = append(out, fmt.Sprintf("%s was not made by skillsync and is left alone", filepath.Join(dir, e.Name())))
		}
	}
	return out
}

// Prune removes the sources that are not in keep. Call it only with the
// sources of a config that loaded: a source missing because of an error
// must not lose its files.
func (c *Cache) Prune(keep []string) Result {
	var res Result
	wanted := map[string]bool{}
	for _, s := range keep {
		wanted[s] = true
	}
	for _, source := range sortedNames(c.manifest.Sources) {
		if wanted[source] {
			continue
		}
		rec := c.filesOf(source, c.manifest.Sources[source])
		if err := c.writer.remove(filepath.Join(c.root, source), nil); err != nil {
			res.Errors = append(res.Errors, fmt.Errorf("remove source %s: %w", source, err))
			continue
		}
		for _, name := range sortedNames(rec.Skills) {
			res.Changes = append(res.Changes, Change{Source: source, Name: name, Op: Removed, Before: rec.Skills[name].Hash})
			c.writer.count(Stats{Removed: rec.Skills[name].fileCount()})
		}
		delete(c.manifest.Sources, source)
		c.dirty = true
	}
	res.Warnings = foreign(c.root, func(name string) bool {
		return name == lockName || name == manifestName || name == stagingName || name == recordsName || name == dirtyName ||
			name == TargetsName || name == SyncsName || jsonfile.IsSetAside(name, manifestName) || jsonfile.IsSetAside(name, TargetsName) ||
			wanted[name] || c.manifest.Sources[name] != nil
	})
	return res
}

// Commit swaps the staged skills in and saves the manifest: first the
// records of the sources that changed, each in a new file, then
// .manifest.json, which switches to them in one rename; then the records
// that neither it nor the manifest before it names are removed.
func (c *Cache) Commit(ctx context.Context) (err error) {
	defer func() {
		if platform.DiskFull(err) {
			err = fmt.Errorf("%w: free space on that disk and sync again; the cache keeps what it had", err)
		}
	}()
	// The records are written while the staged files are flushed and
	// swapped in: in a 1% sync of 10,000 skills they are 9 MB, encoded,
	// hashed and written on one core in some 60 ms, where the swaps mostly
	// wait for the disk. Nothing names them until the manifest does, so a
	// sync that stops first leaves files a later commit removes.
	var written chan error
	if c.dirty {
		written = make(chan error, 1)
		go func() { written <- c.manifest.writeRecords(c.writer.dest, c.root) }()
	}
	swapErr, tell, err := c.writer.swapAll(ctx)
	var recErr error
	if written != nil {
		recErr = <-written
	}
	// A skill that could not be swapped in has its record put back, and
	// the manifest is saved all the same: it must say what is on disk.
	tell()
	if err != nil {
		return err
	}
	if !c.dirty {
		return errors.Join(swapErr, c.clean())
	}
	// The sources a failed swap changed are written again.
	if recErr == nil {
		recErr = c.manifest.writeRecords(c.writer.dest, c.root)
	}
	if recErr != nil {
		return errors.Join(swapErr, recErr)
	}
	if err := c.manifest.saveIndex(c.writer.dest, c.root); err != nil {
		return errors.Join(swapErr, err)
	}
	c.dirty = false
	keep := maps.Clone(c.oldRefs)
	refNames(c.manifest, keep)
	// A record left behind is only disk space: no error of this step
	// fails the sync.
	_ = pruneRecords(c.writer.dest, c.root, keep)
	return errors.Join(swapErr, c.clean())
}

// clean removes the mark of a sync that stopped halfway once the
// manifest says what is live: the mark this sync made, or one it found
// and has now examined every recorded source of.
func (c *Cache) clean() error {
	if c.writer.unclean {
		for source := range c.manifest.Sources {
			if !c.examined[source] {
				return nil
			}
		}
	}
	return c.writer.clean()
}

// ReadManifest loads a cache's manifest and every record of it, files
// included, without locking the cache, for readers such as verify. A
// missing manifest is empty; a corrupt one is an error wrapping
// jsonfile.ErrCorrupt, and is left where it is: a reader writes nothing.
// The next sync sets it aside.
func ReadManifest(root string) (*Manifest, error) {
	return readManifest(root, true)
}

// ReadSkills is ReadManifest without the files of each skill: every
// SkillRecord's Files is nil. It is what the catalog needs, and reads a
// few hundred bytes per skill instead of a record per file.
func ReadSkills(root string) (*Manifest, error) {
	return readManifest(root, false)
}

// recoverRecord handles a record file that could not be used: a corrupt
// one is set aside as <name>.corrupt-<UTC stamp> and never obeyed. It
// returns the warning to pass on; then says what happens next.
func recoverRecord(name string, err error, then string) string {
	if !errors.Is(err, jsonfile.ErrCorrupt) {
		return fmt.Sprintf("%v; %s", err, then)
	}
	aside, serr := jsonfile.SetAside(name, time.Now())
	if serr != nil {
		return fmt.Sprintf("%v (and it could not be set aside: %v); %s", err, serr, then)
	}
	return fmt.Sprintf("%v; it was set aside as %s and %s", err, filepath.Base(aside), then)
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
