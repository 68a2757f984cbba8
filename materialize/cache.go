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
	"github.com/skillsync/skillsync/internal/jsonfile"
	"github.com/skillsync/skillsync/internal/lockfile"
)

// The names skillsync keeps in a cache root besides the source folders.
const (
	lockName     = ".lock"
	manifestName = ".manifest.json"
	stagingName  = ".staging"
)

// ErrLocked is returned when another sync holds the cache.
var ErrLocked = lockfile.ErrLocked

// Cache is an open .skills-cache: locked against other syncs, its staging
// area emptied, its manifest loaded.
type Cache struct {
	root     string
	lock     *lockfile.Lock
	manifest *Manifest
	writer   *Writer
	// dirty is set when the manifest changed and must be written.
	dirty bool
	// Warnings are things the caller should pass on: an unreadable
	// manifest, entries skillsync did not make.
	Warnings []string
}

// Change is one skill added, updated or removed.
type Change struct {
	Source string `json:"source"`
	Name   string `json:"name"`
	Op     string `json:"op"` // added, updated, removed
	Before string `json:"before_hash,omitempty"`
	After  string `json:"after_hash,omitempty"`
}

// OpenCache locks the cache at root, waiting up to wait for another sync
// to finish, and prepares it. The lock is held until Close.
func OpenCache(ctx context.Context, root string, wait time.Duration, verify bool) (*Cache, error) {
	// A cache that is a link would have skillsync write and delete
	// wherever it points.
	if err := atomicfile.MkdirNoFollow(root, 0o755); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	lock, err := lockfile.Acquire(ctx, filepath.Join(root, lockName), wait)
	if err != nil {
		return nil, err
	}
	c := &Cache{root: root, lock: lock}
	c.writer, err = NewWriter(filepath.Join(root, stagingName))
	if err != nil {
		lock.Close()
		return nil, err
	}
	c.writer.Verify = verify
	c.writer.KeepOld = true
	c.manifest, err = LoadManifest(filepath.Join(root, manifestName))
	if err != nil {
		c.Warnings = append(c.Warnings, recoverRecord(filepath.Join(root, manifestName), err, "every cached file will be hashed again"))
	}
	return c, nil
}

// Close releases the lock.
func (c *Cache) Close() error { return c.lock.Close() }

// Root returns the cache directory.
func (c *Cache) Root() string { return c.root }

// Manifest returns the manifest as it stands.
func (c *Cache) Manifest() *Manifest { return c.manifest }

// Stats returns what was written so far.
func (c *Cache) Stats() Stats { return c.writer.Stats }

// SkillDir is where a source's skill lives in the cache.
func (c *Cache) SkillDir(source, name string) string {
	return filepath.Join(c.root, source, name)
}

// Current reports whether source is cached at revision with every file as
// recorded, judged by stat data alone: the no-op fast path, which reads
// and hashes nothing.
func (c *Cache) Current(source, revision string, excluded []string) bool {
	rec, ok := c.manifest.Sources[source]
	if !ok || revision == "" || rec.Revision != revision || c.writer.Verify || !slices.Equal(rec.Excluded, excluded) {
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
		dir := c.SkillDir(source, name)
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

// SyncSource stages every skill of source and removes the skills it no
// longer has. check, when not nil, can refuse a skill by its hash; a
// refused skill keeps what it had. Nothing is live until Commit.
// excluded names the skills left out on purpose, sorted.
func (c *Cache) SyncSource(ctx context.Context, source, revision string, skills []Skill, excluded []string, check func(name, hash string) error) ([]Change, []error) {
	if err := checkName("source", source); err != nil {
		return nil, []error{err}
	}
	if err := ensureDir(filepath.Join(c.root, source)); err != nil {
		return nil, []error{fmt.Errorf("source %s: %w", source, err)}
	}
	old := c.manifest.Sources[source]
	if old == nil {
		old = &SourceRecord{Skills: map[string]*SkillRecord{}}
	}
	next := &SourceRecord{Revision: revision, Skills: map[string]*SkillRecord{}, Excluded: excluded}
	var changes []Change
	var errs []error
	for _, s := range skills {
		if err := checkName("skill", s.Name); err != nil {
			errs = append(errs, fmt.Errorf("source %s: %w", source, err))
			continue
		}
		prev := old.Skills[s.Name]
		var chk func(string) error
		if check != nil {
			chk = func(hash string) error { return check(s.Name, hash) }
		}
		rec, changed, err := c.writer.Stage(ctx, c.SkillDir(source, s.Name), s, prev, chk)
		if err != nil {
			errs = append(errs, fmt.Errorf("source %s skill %s: %w", source, s.Name, err))
			if prev != nil {
				next.Skills[s.Name] = prev
			}
			continue
		}
		next.Skills[s.Name] = rec
		switch {
		case prev == nil:
			changes = append(changes, Change{Source: source, Name: s.Name, Op: "added", After: rec.Hash})
		case changed || prev.Hash != rec.Hash:
			changes = append(changes, Change{Source: source, Name: s.Name, Op: "updated", Before: prev.Hash, After: rec.Hash})
		}
	}
	for _, name := range sortedNames(old.Skills) {
		if _, keep := next.Skills[name]; keep {
			continue
		}
		if err := c.writer.Remove(c.SkillDir(source, name), old.Skills[name]); err != nil {
			errs = append(errs, err)
			next.Skills[name] = old.Skills[name]
			continue
		}
		changes = append(changes, Change{Source: source, Name: name, Op: "removed", Before: old.Skills[name].Hash})
	}
	if len(errs) > 0 {
		// The source is not fully at revision: the next sync must look again.
		next.Revision = ""
	}
	c.manifest.Sources[source] = next
	c.dirty = true
	c.warnForeign(filepath.Join(c.root, source), next.Skills)
	return changes, errs
}

// warnForeign reports entries of dir that skillsync did not make.
func (c *Cache) warnForeign(dir string, known map[string]*SkillRecord) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if _, ok := known[e.Name()]; !ok {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s was not made by skillsync and is left alone", filepath.Join(dir, e.Name())))
		}
	}
}

// Prune removes the sources that are not in keep. Call it only with the
// sources of a config that loaded: a source missing because of an error
// must not lose its files.
func (c *Cache) Prune(keep []string) ([]Change, []error) {
	wanted := map[string]bool{}
	for _, s := range keep {
		wanted[s] = true
	}
	var changes []Change
	var errs []error
	for _, source := range sortedNames(c.manifest.Sources) {
		if wanted[source] {
			continue
		}
		rec := c.manifest.Sources[source]
		if err := c.writer.Remove(filepath.Join(c.root, source), nil); err != nil {
			errs = append(errs, fmt.Errorf("remove source %s: %w", source, err))
			continue
		}
		for _, name := range sortedNames(rec.Skills) {
			changes = append(changes, Change{Source: source, Name: name, Op: "removed", Before: rec.Skills[name].Hash})
			c.writer.count(Stats{Removed: len(rec.Skills[name].Files)})
		}
		delete(c.manifest.Sources, source)
		c.dirty = true
	}
	entries, _ := os.ReadDir(c.root)
	for _, e := range entries {
		name := e.Name()
		if name == lockName || name == manifestName || name == stagingName || wanted[name] {
			continue
		}
		if _, ok := c.manifest.Sources[name]; !ok {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s was not made by skillsync and is left alone", filepath.Join(c.root, name)))
		}
	}
	return changes, errs
}

// Commit swaps the staged skills in and saves the manifest.
func (c *Cache) Commit(ctx context.Context) error {
	if err := c.writer.Commit(ctx); err != nil {
		return err
	}
	if !c.dirty {
		return nil
	}
	return c.manifest.Save(filepath.Join(c.root, manifestName))
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
