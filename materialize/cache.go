package materialize

import (
	"context"
	"errors"
	"fmt"
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
)

// ManifestName is the manifest's file in a cache root, for readers that
// watch it change.
const ManifestName = ".manifest.json"

// The names skillsync keeps in a cache root besides the source folders.
const (
	lockName     = ".lock"
	manifestName = ManifestName
	stagingName  = ".staging"
)

// ErrLocked is returned when another sync holds the cache.
var ErrLocked = flock.ErrLocked

// ErrCorrupt is wrapped by the error for a record file (a manifest, a
// target record) that must not be used: not JSON, an unknown version, a
// name that is not one safe path component.
var ErrCorrupt = jsonfile.ErrCorrupt

// Cache is an open .skills-cache: locked against other syncs, its staging
// area emptied, its manifest loaded.
type Cache struct {
	root     string
	lock     *flock.Lock
	manifest *Manifest
	writer   *writer
	// dirty is set when the manifest changed and must be written.
	dirty bool
	// opened are the warnings of OpenCache.
	opened []string
}

// ChangeOp is what happened to a skill.
type ChangeOp string

// The changes a sync makes to a skill.
const (
	Added   ChangeOp = "added"
	Updated ChangeOp = "updated"
	Removed ChangeOp = "removed"
)

// Change is one skill added, updated or removed.
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
// to finish, and prepares it. The lock is held until Close.
func OpenCache(ctx context.Context, root string, wait time.Duration, verify bool) (*Cache, error) {
	// A cache that is a link would have skillsync write and delete
	// wherever it points.
	if err := atomicfile.MkdirNoFollow(root, 0o755); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	lock, err := flock.Acquire(ctx, filepath.Join(root, lockName), wait)
	if err != nil {
		return nil, err
	}
	c := &Cache{root: root, lock: lock}
	c.writer, err = newWriter(filepath.Join(root, stagingName))
	if err != nil {
		lock.Close()
		return nil, err
	}
	c.writer.verify = verify
	c.writer.keepOld = true
	c.manifest, err = LoadManifest(filepath.Join(root, manifestName))
	if err != nil {
		c.opened = append(c.opened, recoverRecord(filepath.Join(root, manifestName), err, "every cached file will be hashed again"))
	}
	return c, nil
}

// OpenWarnings are what OpenCache found and the user should know: a
// manifest that was unreadable or set aside.
func (c *Cache) OpenWarnings() []string { return slices.Clone(c.opened) }

// Close releases the lock.
func (c *Cache) Close() error { return c.lock.Close() }

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
// Excluded; Skills are not looked at) is cached with every file as
// recorded, judged by stat data alone: the no-op fast path, which reads
// and hashes nothing.
func (c *Cache) Current(src Source) bool {
	rec, ok := c.manifest.Sources[src.Name]
	if !ok || src.Revision == "" || rec.Revision != src.Revision || rec.Fingerprint != src.Fingerprint ||
		c.writer.verify || !slices.Equal(rec.Excluded, src.Excluded) {
		return false
	}
	// Stat calls are cheap alone and many together: spread them over the
	// cores, and stop at the first file that does not match.
	var stale atomic.Bool
	var g errgroup.Group
	g.SetLimit(2 * runtime.NumCPU())
	files := 0
	for name, sk := range rec.Skills {
		files += len(sk.Files)
		dir := c.SkillDir(src.Name, name)
		g.Go(func() error {
			if !stale.Load() && !statMatches(dir, sk) {
				stale.Store(true)
			}
			return nil
		})
	}
	_ = g.Wait()
	if stale.Load() {
		return false
	}
	c.writer.count(Stats{Unchanged: files})
	return true
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
	if err := ensureDir(filepath.Join(c.root, src.Name)); err != nil {
		res.Errors = append(res.Errors, fmt.Errorf("source %s: %w", src.Name, err))
		return res
	}
	old := c.manifest.Sources[src.Name]
	if old == nil {
		old = &SourceRecord{Skills: map[string]*SkillRecord{}}
	}
	next := &SourceRecord{Revision: src.Revision, Fingerprint: src.Fingerprint, Skills: map[string]*SkillRecord{}, Excluded: src.Excluded}
	fail := func(name string, err error) {
		res.Errors = append(res.Errors, skillError(src.Name, name, err))
	}
	type waiting struct {
		name string
		prev *SkillRecord
		st   *staged
	}
	var builds []waiting
	for _, s := range src.Skills {
		if err := checkName("skill", s.Name); err != nil {
			fail(s.Name, err)
			continue
		}
		if _, dup := next.Skills[s.Name]; dup {
			fail(s.Name, errors.New("the source yields two skills of this name"))
			continue
		}
		prev := old.Skills[s.Name]
		opts := stageOptions{maxSize: src.MaxSkillSize}
		if src.Check != nil {
			opts.check = func(h Hash) error { return src.Check(s.Name, h) }
		}
		st, err := c.writer.stage(ctx, c.SkillDir(src.Name, s.Name), s, prev, opts)
		if err != nil {
			fail(s.Name, err)
			if prev != nil {
				next.Skills[s.Name] = prev
			}
			continue
		}
		next.Skills[s.Name] = st.rec
		builds = append(builds, waiting{s.Name, prev, st})
	}
	// The builds of this source end here, so that what it reports is what
	// will be: a skill whose build failed keeps what it had.
	for _, b := range builds {
		name, prev := b.name, b.prev
		if err := b.st.wait(func(error) { c.revert(src.Name, name, prev) }); err != nil {
			fail(name, err)
			if prev != nil {
				next.Skills[name] = prev
			} else {
				delete(next.Skills, name)
			}
			continue
		}
		rec := b.st.rec
		switch {
		case prev == nil:
			res.Changes = append(res.Changes, Change{Source: src.Name, Name: name, Op: Added, After: rec.Hash})
		case b.st.changed || prev.Hash != rec.Hash:
			res.Changes = append(res.Changes, Change{Source: src.Name, Name: name, Op: Updated, Before: prev.Hash, After: rec.Hash})
		}
	}
	for _, name := range sortedNames(old.Skills) {
		if _, keep := next.Skills[name]; keep {
			continue
		}
		if err := c.writer.remove(c.SkillDir(src.Name, name), old.Skills[name]); err != nil {
			fail(name, err)
			next.Skills[name] = old.Skills[name]
			continue
		}
		res.Changes = append(res.Changes, Change{Source: src.Name, Name: name, Op: Removed, Before: old.Skills[name].Hash})
	}
	if len(res.Errors) > 0 {
		// The source is not fully at revision: the next sync must look again.
		next.Revision = ""
	}
	c.manifest.Sources[src.Name] = next
	c.dirty = true
	res.Warnings = foreign(filepath.Join(c.root, src.Name), func(name string) bool { return next.Skills[name] != nil })
	return res
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

// foreign warns of the entries of dir that skillsync did not make.
func foreign(dir string, known func(name string) bool) []string {
	var out []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !known(e.Name()) {
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
		rec := c.manifest.Sources[source]
		if err := c.writer.remove(filepath.Join(c.root, source), nil); err != nil {
			res.Errors = append(res.Errors, fmt.Errorf("remove source %s: %w", source, err))
			continue
		}
		for _, name := range sortedNames(rec.Skills) {
			res.Changes = append(res.Changes, Change{Source: source, Name: name, Op: Removed, Before: rec.Skills[name].Hash})
			c.writer.count(Stats{Removed: len(rec.Skills[name].Files)})
		}
		delete(c.manifest.Sources, source)
		c.dirty = true
	}
	res.Warnings = foreign(c.root, func(name string) bool {
		return name == lockName || name == manifestName || name == stagingName || wanted[name] || c.manifest.Sources[name] != nil
	})
	return res
}

// Commit swaps the staged skills in and saves the manifest.
func (c *Cache) Commit(ctx context.Context) error {
	// A skill that could not be swapped in has its record put back, and
	// the manifest is saved all the same: it must say what is on disk.
	swapErr, err := c.writer.commit(ctx)
	if err != nil {
		return err
	}
	if !c.dirty {
		return swapErr
	}
	if err := c.manifest.Save(filepath.Join(c.root, manifestName)); err != nil {
		return errors.Join(swapErr, err)
	}
	return swapErr
}

// ReadManifest loads a cache's manifest without locking the cache, for
// readers such as the catalog. A missing manifest is empty; a corrupt one
// is an error wrapping jsonfile.ErrCorrupt, and is left where it is: a
// reader writes nothing. The next sync sets it aside.
func ReadManifest(root string) (*Manifest, error) {
	return LoadManifest(filepath.Join(root, manifestName))
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
