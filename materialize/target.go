package materialize

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/internal/flock"
	"github.com/skillsync/skillsync/internal/jsonfile"
	"github.com/skillsync/skillsync/internal/platform"
	"github.com/skillsync/skillsync/internal/realdir"
	"github.com/skillsync/skillsync/skill"
	"github.com/skillsync/skillsync/workspace"
)

// TargetMode is how a target receives skills.
type TargetMode string

// Target modes. Copy is the default: some agents do not follow symbolic
// links.
const (
	Copy    TargetMode = "copy"
	Symlink TargetMode = "symlink"
)

// RecordName is the file in a target directory that lists the entries
// skillsync made there. Nothing else in the directory is ever touched.
const RecordName = ".skillsync.json"

const targetStaging = ".skillsync-staging"

// targetDirty marks a target a sync is changing; see Cache's dirtyName.
const targetDirty = ".skillsync-dirty"

// ConflictsName is the folder of a target where a copy the user edited is
// moved, as <name>-<UTC stamp>, before a new version takes its place.
const ConflictsName = ".skillsync-conflicts"

// TargetRecord is what skillsync made in one target directory.
type TargetRecord struct {
	Version int                     `json:"version"`
	Skills  map[string]*TargetEntry `json:"skills"`
	// Blocked are the skills the last sync left out, sorted: a folder
	// skillsync did not make stands where each would go (the report's
	// Conflicts), so status can say so between syncs.
	Blocked []string `json:"blocked,omitempty"`
	// Workspace is the workspace that keeps the target, as a path from
	// the target folder, slash-separated (absolute where no relative path
	// leads there, as across Windows drives): a record committed with its
	// target names the same workspace in every clone. Two workspaces
	// keeping one folder would each remove the other's skills.
	Workspace string `json:"workspace,omitempty"`
}

// TargetEntry is one entry skillsync made: a copied skill with its files,
// or a symbolic link.
type TargetEntry struct {
	Hash Hash       `json:"hash"`
	Mode TargetMode `json:"mode"`
	// Folder is the entry's folder in the target when it is not the
	// skill's name (FolderName, or the _2 rule): the record keeps the
	// skill's real name as its key. Records before this field hold every
	// entry under its name.
	Folder string                `json:"folder,omitempty"`
	Link   string                `json:"link,omitempty"`
	Files  map[string]FileRecord `json:"files,omitempty"`
}

// folder is where the entry of the skill name is in its target.
func (e *TargetEntry) folder(name string) string {
	if e != nil && e.Folder != "" {
		return e.Folder
	}
	return name
}

// fileCount is what the entry counts in a report: its files, or one for
// a link.
func (e *TargetEntry) fileCount() int {
	if e.Mode == Symlink {
		return 1
	}
	return len(e.Files)
}

// TargetFolder returns the folder the record gives the skill name in its
// target, and whether the record has the skill.
func (r *TargetRecord) TargetFolder(name string) (string, bool) {
	e, ok := r.Skills[name]
	if !ok {
		return "", false
	}
	return e.folder(name), true
}

// TargetSkill is one catalog winner to place in a target.
type TargetSkill struct {
	Skill
	// Source is where the skill comes from, for messages: a source's name
	// or a layer.
	Source string
	// Hash is the skill's hash, recorded for verify.
	Hash Hash
	// Dir is the winner's directory on disk, what a symlink points to; ""
	// when it has none, in which case the skill is copied.
	Dir string
}

// TargetReport says what one target sync did.
type TargetReport struct {
	Dir string `json:"dir"`
	// Written counts the files written (a symbolic link counts one), and
	// Removed the files of the skills taken out, as the cache's Stats do.
	Written   int      `json:"written"`
	Removed   int      `json:"removed"`
	Conflicts []string `json:"conflicts"`
	// Standing counts the Conflicts the sync before left out too (the
	// target's record lists them): a conflict stands until the user acts,
	// and the daemon counts each one once, as it appears.
	Standing int `json:"-"`
	// Preserved are the copies the user had edited, moved aside (to
	// ConflictsName) before a new version took their place or before
	// their skill was removed: full paths, sorted.
	Preserved []string `json:"preserved"`
	// Errors are skills that could not be placed or removed; each kept
	// what it had.
	Errors []string `json:"errors,omitempty"`
	// Warnings say what the user should know: a record set aside.
	Warnings []string `json:"warnings,omitempty"`
	// Refused is set when the target was left as it is, nothing written
	// or removed there: another workspace keeps it (ErrTargetTaken), or a
	// symbolic link leads to it (ErrTargetLinked). Errors says which.
	Refused bool `json:"refused,omitempty"`
}

// TargetRecordVersion is the format version of a target's record.
// Version 1 holds skill hashes of the first kind (internal/skillhash);
// it is read, each copied skill's hash computed again from its file
// records (upgrade), and written as version 2 by the next sync.
const TargetRecordVersion = 2

func newTargetRecord() *TargetRecord {
	return &TargetRecord{Version: TargetRecordVersion, Skills: map[string]*TargetEntry{}}
}

// Validate reports why a decoded target record must not be used: a
// version this build does not read, a skill name or folder that is not
// one safe path component, two entries in one folder, an
// unknown mode, or a file path that leaves its skill.
// A target record is often committed with the target, so nothing in it is
// trusted.
func (r *TargetRecord) Validate() error {
	if err := jsonfile.CheckVersion(r.Version, 1, TargetRecordVersion); err != nil {
		return err
	}
	folders := map[string]string{}
	for _, name := range sortedNames(r.Skills) {
		e := r.Skills[name]
		if err := checkName("skill", name); err != nil {
			return err
		}
		if e == nil {
			return fmt.Errorf("skill %s has no record", name)
		}
		if err := checkName("folder", e.folder(name)); err != nil {
			return fmt.Errorf("skill %s: %w", name, err)
		}
		key := e.folder(name)
		if other, dup := folders[key]; dup {
			return fmt.Errorf("skills %s and %s have one folder %s", other, name, e.folder(name))
		}
		folders[key] = name
		if e.Mode != Copy && e.Mode != Symlink {
			return fmt.Errorf("skill %s: unknown mode %q", name, e.Mode)
		}
		if err := checkFiles(e.Files); err != nil {
			return fmt.Errorf("skill %s: %w", name, err)
		}
	}
	return nil
}

// LoadTargetRecord reads dir's record; a missing one is empty. An
// unreadable or corrupt one gives an empty record and the error; a
// corrupt one's error wraps jsonfile.ErrCorrupt.
func LoadTargetRecord(dir string) (*TargetRecord, error) {
	return loadTargetRecord(func(rec *TargetRecord) error { return jsonfile.Read(filepath.Join(dir, RecordName), rec) })
}

// loadTargetRecordIn is LoadTargetRecord of the target folder tree holds
// open: the record of that folder, not one a link swapped in on the way
// leads to, whose entries the sync would take for its own there.
func loadTargetRecordIn(tree *platform.Tree) (*TargetRecord, error) {
	return loadTargetRecord(func(rec *TargetRecord) error { return jsonfile.ReadIn(tree, RecordName, rec) })
}

func loadTargetRecord(read func(*TargetRecord) error) (*TargetRecord, error) {
	rec := newTargetRecord()
	err := read(rec)
	if errors.Is(err, fs.ErrNotExist) {
		return newTargetRecord(), nil
	}
	if err != nil {
		return newTargetRecord(), err
	}
	if rec.Skills == nil {
		rec.Skills = map[string]*TargetEntry{}
	}
	rec.upgrade()
	return rec, nil
}

// upgrade gives a version-1 record's copies the hashes of today's kind,
// from their file records. A link's hash is the skill's, which the next
// sync records again.
func (r *TargetRecord) upgrade() {
	if r.Version != 1 {
		return
	}
	for _, e := range r.Skills {
		if e.Mode == Copy {
			e.Hash = filesHash(e.Files)
		}
	}
	r.Version = TargetRecordVersion
}

// Target is one target directory to bring up to date, as one value.
type Target struct {
	// Dir is the target directory; it must not be a symbolic link.
	Dir  string
	Mode TargetMode
	// Skills are the skills the target should hold, each name once.
	Skills []TargetSkill
	// Keep names skills the caller could not provide this time (their
	// source failed and the cache cannot give them either): their
	// entries stay exactly as they are, neither rewritten nor removed.
	Keep []string
	// Check says how far the target's record is trusted: under
	// CheckRecord (the zero value) a skill whose hash is the recorded one
	// is taken as in place without a look at its files; a copy is
	// checked for the user's edits when it is about to be rewritten.
	Check Check
	// MaxSkillSize, when above zero, caps the bytes of one skill's files.
	MaxSkillSize int64
	// Wait is how long to wait for another sync (of another workspace)
	// to finish with the target.
	Wait time.Duration
	// Root, when Dir lies below it, is a folder from which no symbolic
	// link may lead to Dir (the workspace, the home directory): each
	// folder on the way is made and opened without following a link
	// (ErrTargetLinked), just before the target is locked and again once
	// it is, so a folder swapped for a link since the caller's own check
	// is refused rather than written through. "" checks Dir alone.
	Root string
	// Workspace is the root folder of the workspace placing the skills,
	// recorded in the target's record. A target whose record names
	// another workspace that still has its cache is refused
	// (ErrTargetTaken). "" checks and records nothing.
	Workspace string

	// rules, when set, replace the host's file system rules (tests force
	// another system's with it).
	rules *fsRules
	// checked, when set, is called once the target has been looked at
	// for the last time and before anything is written there: a test
	// swaps a folder on the way for a link then.
	checked func()
	// locked, when set, is called once the target's lock is taken: a
	// test swaps the target folder for another then.
	locked func()
	// committed, when set, is called once every entry is live and before
	// the record is written: a test keeps the folder as a sync killed
	// then leaves it.
	committed func()
}

// SyncTarget places t.Skills in t.Dir as t.Mode says. A name in the
// directory that skillsync did not make is a conflict: reported and left
// as it is, unless it already holds exactly that skill (a lost record),
// which is adopted. Entries skillsync made for skills that are neither in
// t.Skills nor in t.Keep are removed. A skill that cannot be placed keeps
// what it had and is reported. The error is for what stops the whole
// target: a link in place of the directory, a record that cannot be
// written. A link in place of the directory is refused with an error
// that wraps ErrTargetLinked, before anything is written there.
func SyncTarget(ctx context.Context, t Target) (TargetReport, error) {
	report := TargetReport{Dir: t.Dir, Conflicts: []string{}, Preserved: []string{}}
	if err := CheckTargetPlace(t.Dir); err != nil {
		return report, err
	}
	// A target that is a link would have skillsync write and delete
	// wherever it points. The folder reached is held open, and
	// everything the sync writes, renames or removes there goes through
	// it: a folder on the way swapped for a link from now on is not on
	// the way any more.
	tree, lk, err := lockedTarget(ctx, t.Root, t.Dir, t.Wait, t.locked)
	if err != nil {
		return report, err
	}
	defer tree.Close()
	defer lk.Close()
	if t.checked != nil {
		t.checked()
	}
	return syncTarget(ctx, t, tree, report)
}

// ErrTargetLinked is wrapped by the error of a target reached through a
// symbolic link where skillsync would write: it is refused, never
// followed, and left as it is.
var ErrTargetLinked = errors.New("is reached through a symbolic link")

// IsRefused reports whether err is a target's refusal (ErrTargetTaken,
// ErrTargetLinked, ErrTargetPlace): the target was left as it is, nothing
// written or removed there, and the other targets go on.
func IsRefused(err error) bool {
	return errors.Is(err, ErrTargetTaken) || errors.Is(err, ErrTargetLinked) || errors.Is(err, ErrTargetPlace)
}

// mkdirTarget makes the target folder dir, refusing a link in its place
// or, when dir lies below root, on the way from root (platform.MkdirTree), with
// an error wrapping ErrTargetLinked, and returns it held open:
// SyncTarget's and GiveUpTarget's last look before they write or remove
// anything there, which they do through the tree.
func mkdirTarget(root, dir string) (*platform.Tree, error) {
	if root != "" {
		rel, err := filepath.Rel(filepath.Clean(root), filepath.Clean(dir))
		if err == nil && rel != "." && filepath.IsLocal(rel) {
			tree, err := platform.MkdirTree(filepath.Clean(root), strings.Split(rel, string(filepath.Separator)), 0o755)
			switch {
			case errors.Is(err, platform.ErrLinkOnPath):
				return nil, fmt.Errorf("target %s %w: %w, which skillsync does not follow; it is left as it is: replace the link with a folder, or point the target at the folder it leads to", dir, ErrTargetLinked, err)
			case err != nil:
				return nil, fmt.Errorf("target: %w", err)
			}
			return tree, nil
		}
	}
	err := atomicfile.MkdirNoFollow(dir, 0o755)
	var tree *platform.Tree
	if err == nil {
		tree, err = platform.OpenTree(dir)
		if errors.Is(err, platform.ErrLink) {
			err = fmt.Errorf("%w: %w", atomicfile.ErrSymlink, err)
		}
	}
	switch {
	case errors.Is(err, atomicfile.ErrSymlink):
		return nil, fmt.Errorf("target %s %w: %w; it is left as it is: replace the link with a folder, or point the target at the folder it leads to", dir, ErrTargetLinked, err)
	case err != nil:
		return nil, fmt.Errorf("target: %w", err)
	}
	return tree, nil
}

// lockedTarget makes and opens the target folder dir (mkdirTarget) and
// takes the lock of that very folder, held open: the folder written is
// the folder locked, whatever is swapped in at dir meanwhile. When
// another sync had the lock first, the wait was time for dir, or a
// folder on the way, to be swapped: dir is looked at again, and must be
// the folder locked, else that one is let go and the folder at dir
// locked instead. locked, a test's hook, is called once a lock is taken.
func lockedTarget(ctx context.Context, root, dir string, wait time.Duration, locked func()) (*platform.Tree, *flock.Lock, error) {
	for try := 1; ; try++ {
		tree, lk, moved, err := lockTargetOnce(ctx, root, dir, wait, locked)
		if err != nil || !moved {
			return tree, lk, err
		}
		if try == 3 {
			return nil, nil, fmt.Errorf("target %s: the folder there was replaced by another while this sync waited for its lock, %d times; run sync again once nothing else moves it", dir, try)
		}
	}
}

// lockTargetOnce is one try of lockedTarget: moved reports that the
// folder at dir was not the one locked once the lock came, and nothing
// is held then. What it took is let go on every way out but success, a
// panic included: the daemon goes on past one, and a target left locked
// until the collector closed it would stop every later sync's.
func lockTargetOnce(ctx context.Context, root, dir string, wait time.Duration, locked func()) (*platform.Tree, *flock.Lock, bool, error) {
	tree, err := mkdirTarget(root, dir)
	if err != nil {
		return nil, nil, false, err
	}
	var lk *flock.Lock
	held := false
	defer func() {
		if held {
			return
		}
		if lk != nil {
			lk.Close()
		}
		tree.Close()
	}()
	lk, waited, err := lockTarget(ctx, tree, wait)
	if err != nil {
		return nil, nil, false, err
	}
	if locked != nil {
		locked()
	}
	if waited {
		same, err := stillAt(tree, root, dir)
		if err != nil {
			return nil, nil, false, err
		}
		if !same {
			return nil, nil, true, nil
		}
	}
	held = true
	return tree, lk, false, nil
}

// stillAt reports whether the folder tree holds is the one at dir now,
// reached from root as mkdirTarget reaches it (and refused as it
// refuses).
func stillAt(tree *platform.Tree, root, dir string) (bool, error) {
	again, err := mkdirTarget(root, dir)
	if err != nil {
		return false, err
	}
	defer again.Close()
	a, err := tree.Open()
	if err != nil {
		return false, fmt.Errorf("target: %w", err)
	}
	defer a.Close()
	b, err := again.Open()
	if err != nil {
		return false, fmt.Errorf("target: %w", err)
	}
	defer b.Close()
	ai, err := a.Stat()
	if err != nil {
		return false, fmt.Errorf("target: %w", err)
	}
	bi, err := b.Stat()
	if err != nil {
		return false, fmt.Errorf("target: %w", err)
	}
	return os.SameFile(ai, bi), nil
}

// ErrTargetPlace is wrapped by CheckTargetPlace's error: the folder is a
// workspace's cache or skills folder, or a repository's .git, or inside
// one.
var ErrTargetPlace = errors.New("is no place for a target")

// CheckTargetPlace refuses a target folder that is a workspace's cache
// (workspace.CacheName), a workspace's skills folder (a skills folder
// beside a skillsync.yaml) or a git repository's own folder
// (skill.GitName), or inside one, as written or as the links on
// its path lead: another workspace's cache holds exactly the skills a
// sync would write, and its skills folder may, which the sync would
// adopt, then remove from there when they leave its sources or the
// folder leaves its config.
func CheckTargetPlace(dir string) error {
	for _, p := range []string{filepath.Clean(dir), realdir.Path(dir)} {
		for q := p; ; q = filepath.Dir(q) {
			if skill.GitName(filepath.Base(q)) {
				// A config a clone brought (dir: .git/hooks) must not have a
				// sync place skills in the repository's own folder, which
				// git keeps, as AGENTS.md may not resolve there either.
				return fmt.Errorf("target %s %w: %s is a git repository's own folder; point the target at a folder of its own", dir, ErrTargetPlace, q)
			}
			if strings.EqualFold(filepath.Base(q), workspace.CacheName) {
				return fmt.Errorf("target %s %w: %s is a workspace's cache; skillsync never places skills in a cache, so point the target at a folder of its own", dir, ErrTargetPlace, q)
			}
			if filepath.Base(q) == workspace.SkillsName {
				if _, err := os.Lstat(filepath.Join(filepath.Dir(q), workspace.ConfigName)); err == nil {
					return fmt.Errorf("target %s %w: %s is the skills folder of the workspace at %s, whose own skills a sync would take over and remove; point the target at a folder of its own", dir, ErrTargetPlace, q, filepath.Dir(q))
				}
			}
			if filepath.Dir(q) == q {
				break
			}
		}
	}
	return nil
}

// targetLock is the lock file in a target on a system that cannot lock
// a folder (lockTarget): two workspaces' syncs of one folder (the second
// to be refused) must not interleave.
const targetLock = ".skillsync-lock"

// lockTarget takes the lock of the target folder tree holds, waiting up
// to wait for another sync to finish with it: a lock on the folder
// itself, which leaves a committed target as it was (on Windows an empty
// lock file, targetLock). waited reports whether it had to wait.
func lockTarget(ctx context.Context, tree *platform.Tree, wait time.Duration) (lk *flock.Lock, waited bool, err error) {
	dir := tree.Path()
	lk, waited, err = flock.AcquireTree(ctx, tree, targetLock, wait)
	switch {
	case errors.Is(err, flock.ErrLocked):
		return nil, waited, fmt.Errorf("target %s: another sync is changing it (%w); it waited %s: run sync again once that one is done, or give it longer with --wait", dir, err, wait)
	case err != nil:
		return nil, waited, fmt.Errorf("target %s: %w", dir, err)
	}
	return lk, waited, nil
}

// syncTarget is SyncTarget with the target's lock held.
// tree is the target folder held open: what the sync changes there goes
// through it.
func syncTarget(ctx context.Context, t Target, tree *platform.Tree, report TargetReport) (TargetReport, error) {
	dir := t.Dir
	rec, err := loadTargetRecordIn(tree)
	if errors.Is(err, jsonfile.ErrCorrupt) {
		report.Warnings = append(report.Warnings, recoverRecordIn(tree, err,
			"its entries that hold exactly what skillsync would write are adopted, the rest are left to the user"))
	} else if err != nil {
		return report, err
	}
	keeper, warning, err := claimTarget(dir, t.Workspace, rec.Workspace)
	if err != nil {
		return report, err
	}
	if warning != "" {
		report.Warnings = append(report.Warnings, warning)
	}
	w, err := newWriterIn(tree, filepath.Join(dir, targetStaging), filepath.Join(dir, targetDirty), recycleAfter)
	if err != nil {
		return report, err
	}
	defer func() {
		w.tidy()
		_ = w.dest.removeAll(w.staging)
	}()
	w.check = t.Check
	// Every writer of these holds the target's lock: a temporary file of
	// theirs is one a killed sync left, in the folder agents read. Swept
	// after a run that stopped halfway, and before a change; a sync that
	// changes nothing does not list the folder.
	w.leftovers = []string{RecordName, targetDirty}
	if w.unclean {
		w.sweep()
	}
	if t.rules != nil {
		w.rules = *t.rules
	}
	// A sync stopped halfway here left the entries it was putting live
	// in the marker (targetpending.go).
	var pending, alt map[string]*TargetEntry
	if w.unclean {
		pending = readPending(tree)
		alt = adoptPending(rec, pending)
	}
	next := newTargetRecord()
	next.Workspace = keeper
	for _, name := range t.Keep {
		if e, ok := rec.Skills[name]; ok {
			next.Skills[name] = e
		}
	}
	// byFolder is what the record has in each folder: an entry belongs to
	// its folder, so a skill that moves (a new folder name) leaves its old
	// folder to be removed, and a skill that comes to a folder another
	// skill had takes that entry's place.
	byFolder := map[string]string{}
	for name, e := range rec.Skills {
		byFolder[e.folder(name)] = name
	}
	folders, moved := planFolders(t, rec)
	fail := func(name string, err error) {
		report.Errors = append(report.Errors, fmt.Sprintf("target %s: %v", dir, skillError("", name, err)))
	}
	// preserved are the edited copies to be moved aside, by folder; a
	// skill whose new version fails keeps its copy where it is.
	preserved := map[string]string{}
	owner := map[string]string{} // folder -> the skill planned there
	for name, f := range folders {
		owner[f] = name
	}
	// restore puts name's entry back as the record had it, unless its
	// folder now belongs to another skill.
	restore := func(name string) {
		e, ok := rec.Skills[name]
		if o := owner[e.folder(name)]; !ok || o != "" && o != name {
			delete(next.Skills, name)
			return
		}
		next.Skills[name] = e
	}
	// undo puts name's entry back as the record had it.
	undo := func(name, folder string) {
		restore(name)
		delete(preserved, folder)
	}
	keep := func(folder string, prev *TargetEntry) func() (string, error) {
		return func() (string, error) {
			if prev == nil || !w.entryEdited(filepath.Join(dir, folder), prev) {
				return "", nil
			}
			if a := alt[folder]; a != nil && a != prev && !w.entryEdited(filepath.Join(dir, folder), a) {
				return "", nil // what a sync stopped halfway put there
			}
			aside, err := w.dest.conflictPath(dir, folder)
			if err == nil {
				preserved[folder] = aside
			}
			return aside, err
		}
	}
	foreignFolds := foreignFolder(dir, byFolder)
	type waiting struct {
		name, folder string
		entry        *TargetEntry
		st           *staged
	}
	var builds []waiting
	for _, s := range t.Skills {
		if err := checkName("skill", s.Name); err != nil {
			fail(s.Name, err)
			continue
		}
		if _, dup := next.Skills[s.Name]; dup {
			continue
		}
		folder := folders[s.Name]
		if err := w.rules.checkSkillName(folder); err != nil {
			fail(s.Name, err)
			continue
		}
		live := filepath.Join(dir, folder)
		prevName, ours := byFolder[folder]
		if !ours {
			// On a file system that folds case, the record's folder whose
			// name differs only in case is this very folder.
			prevName, ours = sameFolderIn(dir, folder, byFolder)
		}
		prev := rec.Skills[prevName]
		if !ours {
			if _, err := os.Lstat(live); err == nil {
				// Not in the record but there: the user's own, unless it
				// is exactly what skillsync would write (a record lost or
				// set aside), which is adopted back.
				entry, same := adopt(ctx, w, live, t, s)
				if !same {
					report.Conflicts = append(report.Conflicts, s.Name)
					continue
				}
				entry.Folder = folderField(s.Name, folder)
				next.Skills[s.Name] = entry
				continue
			}
			if foreignFolds(folder) {
				// The user's own folder of this name in another case: on a
				// file system that folds case it is this very folder, and
				// folders compare without case on every system.
				report.Conflicts = append(report.Conflicts, s.Name)
				continue
			}
		}
		if why, ok := moved[s.Name]; ok {
			if e, had := rec.Skills[s.Name]; !had || e.folder(s.Name) != folder {
				report.Warnings = append(report.Warnings, fmt.Sprintf("skill %q of %s is placed in %s as %s: %s",
					s.Name, cmp.Or(s.Source, "its source"), dir, folder, why))
			}
		}
		name := s.Name
		entry, st, err := stageTarget(ctx, w, live, t, s, prev, keep(folder, prev), func(err error) {
			fail(name, err)
			undo(name, folder)
		})
		if err != nil {
			fail(s.Name, err)
			undo(s.Name, folder)
			continue
		}
		if entry == prev {
			c := *prev // the record's entry is read below, as it was
			entry = &c
		}
		entry.Folder = folderField(s.Name, folder)
		next.Skills[s.Name] = entry
		if st != nil {
			builds = append(builds, waiting{s.Name, folder, entry, st})
		}
	}
	for _, b := range builds {
		name, folder := b.name, b.folder
		err := b.st.wait(w, func(err error) {
			fail(name, err)
			undo(name, folder)
		})
		if err != nil {
			fail(name, err)
			undo(name, folder)
			continue
		}
		b.entry.Files = b.st.rec.Files()
	}
	// A stop (SIGTERM) fails every skill not staged yet, each with the
	// stop as its error; going on would write a record without them and
	// pass, a new target left empty. Nothing is swapped in or removed:
	// the target stays as the last sync left it.
	if err := ctx.Err(); err != nil {
		return report, fmt.Errorf("target %s: %w", dir, err)
	}
	// Before the first change here: the marker lists what is going live.
	if err := w.markPending(rec, next, pending); err != nil {
		return report, fmt.Errorf("target %s: %w", dir, err)
	}
	// What the record had in a folder that no entry holds now is removed.
	inUse := map[string]bool{}
	for name, e := range next.Skills {
		inUse[e.folder(name)] = true
	}
	for _, name := range sortedNames(rec.Skills) {
		e := rec.Skills[name]
		folder := e.folder(name)
		if inUse[folder] {
			continue
		}
		if _, same := sameFolderIn(dir, folder, inUse); same {
			continue // the folder in use under another case: never removed
		}
		// A copy the user edited is moved aside, never deleted.
		aside, err := keep(folder, e)()
		if err == nil && aside != "" {
			err = w.moveOut(filepath.Join(dir, folder), aside, &SkillRecord{files: e.Files}, false)
		} else if err == nil {
			err = w.remove(filepath.Join(dir, folder), &SkillRecord{files: e.Files})
		}
		if err != nil {
			fail(name, err)
			if _, placed := next.Skills[name]; !placed {
				restore(name)
			}
			delete(preserved, folder)
			continue
		}
		report.Removed += e.fileCount()
	}
	if _, err := w.commit(ctx); err != nil {
		return report, fmt.Errorf("target %s: %w", dir, err)
	}
	if t.committed != nil {
		t.committed()
	}
	report.Written = w.Stats().Written
	// A skill that stays in its folder loses there what its new entry
	// lacks; a swap that failed put its record's entry back, which lacks
	// nothing.
	for name, e := range next.Skills {
		if prev := rec.Skills[name]; prev != nil && prev.folder(name) == e.folder(name) {
			report.Removed += lost(prev, e)
		}
	}
	for _, name := range sortedNames(preserved) {
		report.Preserved = append(report.Preserved, preserved[name])
	}
	next.Blocked = slices.Sorted(slices.Values(report.Conflicts))
	for _, name := range next.Blocked {
		if slices.Contains(rec.Blocked, name) {
			report.Standing++
		}
	}
	// The writer sweeps the record's leftovers (w.leftovers): this write
	// does not list a folder of thousands of skills again.
	if err := w.dest.writeJSON(filepath.Join(dir, RecordName), next, 0o644); err != nil {
		return report, err
	}
	if w.unclean && len(t.Keep) > 0 {
		// Entries kept as they were were not looked at: the next run must.
		return report, nil
	}
	return report, w.clean()
}

// lost counts the files of prev, a skill's recorded entry, that next,
// its entry in the same folder now, does not have: a link counts one,
// as it does when written.
func lost(prev, next *TargetEntry) int {
	switch {
	case prev.Mode != next.Mode:
		return prev.fileCount()
	case prev.Mode == Symlink:
		return 0
	}
	n := 0
	for p := range prev.Files {
		if _, ok := next.Files[p]; !ok {
			n++
		}
	}
	return n
}

// recoverRecordIn is recoverRecord of the record of the target folder
// tree holds open: set aside in that folder.
func recoverRecordIn(tree *platform.Tree, err error, then string) string {
	if !errors.Is(err, jsonfile.ErrCorrupt) {
		return fmt.Sprintf("%v; %s", err, then)
	}
	aside, serr := jsonfile.SetAsideIn(tree, RecordName, time.Now())
	if serr != nil {
		return fmt.Sprintf("%v (and it could not be set aside: %v); %s", err, serr, then)
	}
	return fmt.Sprintf("%v; it was set aside as %s and %s", err, filepath.Base(aside), then)
}

// folderField is what a record entry of name in folder says of its
// folder: nothing when the folder is the name.
func folderField(name, folder string) string {
	if folder == name {
		return ""
	}
	return folder
}

// stageTarget stages one skill in a target. The staged result, when not
// nil, must be waited for before the entry's files are known.
// preserve is asked, only when live is about to be replaced, where to
// keep it ("" when it need not be kept).
func stageTarget(ctx context.Context, w *writer, live string, t Target, s TargetSkill, prev *TargetEntry, preserve func() (string, error), failed func(error)) (*TargetEntry, *staged, error) {
	if t.Mode == Symlink && s.Dir != "" {
		if err := w.stageLink(live, s.Dir, preserve, failed); err != nil {
			return nil, nil, err
		}
		return &TargetEntry{Hash: s.Hash, Mode: Symlink, Link: s.Dir}, nil, nil
	}
	var old *SkillRecord
	if prev != nil && prev.Mode == Copy {
		old = &SkillRecord{Hash: prev.Hash, files: prev.Files}
		// The caller knows the skill's hash (from the cache's manifest):
		// when it is what the record says and the files are as written,
		// nothing needs to be read.
		if !s.Hash.IsZero() && s.Hash == prev.Hash && !w.hashes() && (w.trusts() || statMatches(live, old)) {
			w.count(Stats{Unchanged: len(prev.Files)})
			return prev, nil, nil
		}
	}
	st, err := w.stage(ctx, live, s.Skill, old, stageOptions{maxSize: t.MaxSkillSize, preserve: preserve})
	if err != nil {
		return nil, nil, err
	}
	entry := &TargetEntry{Hash: st.rec.Hash, Mode: Copy, Files: st.rec.Files()}
	if st.build == nil && st.patch == nil {
		return entry, nil, nil
	}
	return entry, st, nil
}

// adopt reports whether live already is what stageTarget would make of s,
// and the record entry for it then. It writes nothing.
func adopt(ctx context.Context, w *writer, live string, t Target, s TargetSkill) (*TargetEntry, bool) {
	if t.Mode == Symlink && s.Dir != "" {
		cur, err := os.Readlink(live)
		return &TargetEntry{Hash: s.Hash, Mode: Symlink, Link: s.Dir}, err == nil && cur == s.Dir
	}
	rec, same := w.matches(ctx, live, s.Skill, t.MaxSkillSize)
	if !same {
		return nil, false
	}
	return &TargetEntry{Hash: rec.Hash, Mode: Copy, Files: rec.Files()}, true
}

// stageLink queues live to become a symbolic link to target, unless it
// already is one.
func (w *writer) stageLink(live, target string, preserve func() (string, error), failed func(error)) error {
	if cur, err := os.Readlink(live); err == nil && cur == target {
		return nil
	}
	aside, err := preserve()
	if err != nil {
		return fmt.Errorf("keep the edited copy: %w", err)
	}
	// Read staging first: a build's later first look must not take this
	// link for an earlier run's leftover.
	w.list()
	staged := filepath.Join(w.staging, randomName())
	if err := w.dest.symlink(target, staged); err != nil {
		return err
	}
	w.count(Stats{Written: 1})
	w.queue(&swap{staged: staged, live: live, aside: aside, failed: failed})
	return nil
}

// entryEdited reports whether the user changed what skillsync made at
// live, as its record entry says: a copy's files (changed or added; one
// gone is no edit, writer.edited),
// or a link that no longer points where it did. A missing entry is not
// edited: there is nothing to keep.
func (w *writer) entryEdited(live string, e *TargetEntry) bool {
	if e.Mode == Copy {
		return w.edited(live, &SkillRecord{files: e.Files})
	}
	info, err := os.Lstat(live)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err != nil || info.Mode()&fs.ModeSymlink == 0 {
		return true
	}
	cur, err := os.Readlink(live)
	return err != nil || cur != e.Link
}

// conflictPath returns a free path in dir's ConflictsName folder for a
// copy of name, creating the folder (never through a link).
func (d dest) conflictPath(dir, name string) (string, error) {
	conflicts := filepath.Join(dir, ConflictsName)
	if err := d.mkdirNoFollow(conflicts); err != nil {
		return "", err
	}
	base := filepath.Join(conflicts, name+"-"+time.Now().UTC().Format("20060102T150405Z"))
	p := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		p = fmt.Sprintf("%s-%d", base, i)
	}
}

// foreignFolder returns whether dir holds an entry that is not ours (in
// recorded) whose name differs from a folder's in case alone. dir is
// listed once, at the first question.
func foreignFolder(dir string, recorded map[string]string) func(folder string) bool {
	var folded map[string]bool
	return func(folder string) bool {
		if folded == nil {
			folded = map[string]bool{}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if _, ours := recorded[e.Name()]; !ours && !strings.HasPrefix(e.Name(), ".skillsync") { // its record, staging, conflicts
					folded[skill.FoldName(e.Name())] = true
				}
			}
		}
		return folded[skill.FoldName(folder)]
	}
}

// sameFolderIn finds, among the keys of m, another name for the folder
// dir/folder: a name that differs from folder only in case and that the
// file system resolves to the same directory (it folds case, as macOS's
// and Windows' do by default). It returns that key's value and true.
func sameFolderIn[V any](dir, folder string, m map[string]V) (V, bool) {
	var zero V
	var here os.FileInfo
	for k, v := range m {
		if k == folder || skill.FoldName(k) != skill.FoldName(folder) {
			continue
		}
		if here == nil {
			info, err := os.Stat(filepath.Join(dir, folder))
			if err != nil {
				return zero, false
			}
			here = info
		}
		if info, err := os.Stat(filepath.Join(dir, k)); err == nil && os.SameFile(here, info) {
			return v, true
		}
	}
	return zero, false
}

// ErrTargetTaken is wrapped by the error of a target whose record names
// another workspace, one that still has its cache.
var ErrTargetTaken = errors.New("the target is another workspace's")

// claimTarget checks that the target dir is not another workspace's:
// recorded is the workspace its record names, ws the root of the one
// syncing now. It returns what the record should name from now on, and a
// warning when ws takes over from a workspace that is gone (moved, or
// removed: no cache there any more).
func claimTarget(dir, ws, recorded string) (keeper, warning string, err error) {
	if ws == "" {
		return recorded, "", nil
	}
	keeper = workspaceFrom(dir, ws)
	if keptBy(dir, ws, keeper, recorded) {
		return keeper, "", nil
	}
	other := recordedWorkspace(dir, recorded)
	fi, err := os.Stat(filepath.Join(other, workspace.CacheName))
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		// A cache this process may not look at is not one that is gone.
	case err != nil || !fi.IsDir():
		return keeper, fmt.Sprintf("target %s: the workspace %s kept it and has no %s any more: this workspace keeps it now", dir, other, workspace.CacheName), nil
	case !listsTarget(other, dir):
		return keeper, fmt.Sprintf("target %s: its %s names the workspace %s, whose %s does not list it (a copied folder, or one given up): this workspace keeps it now", dir, RecordName, other, TargetsName), nil
	}
	return "", "", fmt.Errorf("target %s: %w: its %s says the workspace %s keeps it, and each would remove the skills the other placed; give one of the two another target, or take the target out of that workspace's config and sync that workspace (skillsync -g sync, where it is the user-wide one), which gives the folder up (if that workspace no longer places skills here, delete %s: the folders it lists are then left to you)",
		dir, ErrTargetTaken, RecordName, other, filepath.Join(dir, RecordName))
}

// listsTarget reports whether the workspace other's list of the targets
// it keeps (its cache's TargetsName) may name dir. A list that cannot be
// read (none, from a skillsync before lists, or one set aside) says
// nothing, and other is taken to keep dir. An entry below a home
// directory (~/...) is taken to name every folder whose path ends as it
// does: the home of the sync that wrote it need not be this one's.
func listsTarget(other, dir string) bool {
	list, err := ReadTargetList(filepath.Join(other, workspace.CacheName, TargetsName))
	if err != nil {
		return true
	}
	slashed := filepath.ToSlash(filepath.Clean(dir))
	for _, entries := range list.Configs {
		for _, entry := range entries {
			if rest, ok := strings.CutPrefix(entry, "~/"); ok {
				if strings.HasSuffix(slashed, "/"+path.Clean(rest)) {
					return true
				}
				continue
			}
			if filepath.IsAbs(entry) && realdir.Same(entry, dir) {
				return true
			}
		}
	}
	return false
}

// recordedWorkspace is the folder a target dir's record names as its
// workspace: a relative path leads from the folder dir really is, so that
// a path to the target through a link does not change where it leads.
func recordedWorkspace(dir, recorded string) string {
	other := filepath.FromSlash(recorded)
	if !filepath.IsAbs(other) {
		other = filepath.Join(realdir.Path(dir), other)
	}
	return other
}

// GiveUpTarget empties dir, a target folder the workspace ws kept and
// its config no longer names: the entries its record lists go as those
// of skills no longer placed do (an edited copy is moved aside), then the
// record. It reports whether dir is given up; a folder whose record
// names another workspace, or that has no record, is left as it is and
// counts as given up, as does one whose record is corrupt (set aside, its
// entries left to the user), and one whose entries could not all be
// removed keeps its record for the next try.
func GiveUpTarget(ctx context.Context, dir, ws string, wait time.Duration) (TargetReport, bool, error) {
	return GiveUpTargetBelow(ctx, "", dir, ws, wait)
}

// GiveUpTargetBelow is GiveUpTarget for a target folder below root, from
// which no symbolic link may lead to it (Target.Root).
func GiveUpTargetBelow(ctx context.Context, root, dir, ws string, wait time.Duration) (TargetReport, bool, error) {
	report := TargetReport{Dir: dir, Conflicts: []string{}, Preserved: []string{}}
	record := filepath.Join(dir, RecordName)
	if _, err := os.Lstat(record); errors.Is(err, fs.ErrNotExist) {
		return report, true, nil
	}
	if err := CheckTargetPlace(dir); err != nil {
		return report, false, err
	}
	// Nothing is removed through a link in place of the folder, or on
	// the way to it.
	tree, lk, err := lockedTarget(ctx, root, dir, wait, nil)
	if err != nil {
		return report, false, err
	}
	defer tree.Close()
	defer lk.Close()
	rec, err := loadTargetRecordIn(tree)
	if errors.Is(err, jsonfile.ErrCorrupt) {
		report.Warnings = append(report.Warnings, recoverRecordIn(tree, err, "its entries are left to the user"))
		return report, true, nil
	}
	if err != nil {
		return report, false, err
	}
	if !keptBy(dir, ws, workspaceFrom(dir, ws), rec.Workspace) {
		return report, true, nil
	}
	report, err = syncTarget(ctx, Target{Dir: dir, Workspace: ws}, tree, report)
	if err != nil || len(report.Errors) > 0 {
		return report, false, err
	}
	if err := (dest{tree}).remove(record); err != nil {
		return report, false, fmt.Errorf("target %s: remove its record: %w", dir, err)
	}
	return report, true, nil
}

// KeptElsewhere returns the folder of the workspace r, dir's record,
// names when a sync of ws would be refused the target (ErrTargetTaken):
// the workspace that keeps it; "" when ws keeps it or would take it over.
func (r *TargetRecord) KeptElsewhere(dir, ws string) string {
	if _, _, err := claimTarget(dir, ws, r.Workspace); errors.Is(err, ErrTargetTaken) {
		return recordedWorkspace(dir, r.Workspace)
	}
	return ""
}

// keptBy reports whether recorded, the workspace a target dir's record
// names, is ws, which the record would name mine (workspaceFrom); "" in
// records older than the field is taken as ws.
func keptBy(dir, ws, mine, recorded string) bool {
	return recorded == "" || recorded == mine || realdir.Same(recordedWorkspace(dir, recorded), ws)
}

// workspaceFrom is the workspace ws as a target dir's record names it:
// the path between the folders they really are, so that one workspace
// reached by two paths (one through a link) writes one name.
func workspaceFrom(dir, ws string) string {
	ws = realdir.Path(ws)
	if rel, err := filepath.Rel(realdir.Path(dir), ws); err == nil {
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(ws)
}
