package drafts

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/internal/realdir"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/skill"
)

// InvalidError is a draft the gate refuses: strict validation found
// problems, each of which the message names.
type InvalidError struct {
	Name     string
	Problems []skill.Problem
}

func (e *InvalidError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = "  " + p.String()
	}
	return fmt.Sprintf("draft %s is not promoted: %d %s; fix them and promote again, the draft stays in the drafts:\n%s",
		e.Name, len(e.Problems), plural(len(e.Problems), "problem"), strings.Join(lines, "\n"))
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// Existing is the skill of a draft's name that already stands in the
// layer a promotion goes to: it is archived, never deleted.
type Existing struct {
	Name string
	Dir  string
}

// Moved is what PromoteLocal did.
type Moved struct {
	Draft Draft
	// Dir is where the skill now lives.
	Dir string
	// Archived is where the skill it replaced went, "" when there was none;
	// ArchivedHash is that skill's hash.
	Archived     string
	ArchivedHash string
}

// PromoteLocal moves the draft name into the local layer directory
// layerDir as <layerDir>/<name>, in one rename that never replaces
// anything. edit, when set, changes the draft's SKILL.md under its lock
// first (Folder.stage). check sees the draft, inspected under its lock,
// and may refuse it; a draft with a problem is refused with
// *InvalidError before check is asked. When existing is set, that skill
// is archived first (Archive: <layerDir>/.archive/<name>-<stamp>/,
// restorable); when the rename then fails, it is moved back. On any
// refusal or failure the draft stays where it was, as it was.
func (d *Folder) PromoteLocal(ctx context.Context, name, layerDir string, existing func() (*Existing, error), check func(Draft) error, edit func([]byte) ([]byte, error), now time.Time) (Moved, error) {
	lock, err := d.Lock(ctx, name)
	if err != nil {
		return Moved{}, err
	}
	defer lock.Close()
	undo, err := d.stage(name, edit)
	if err != nil {
		return Moved{}, err
	}
	m, err := d.promoteLocal(ctx, name, layerDir, existing, check, now)
	if err != nil {
		return m, errors.Join(err, undo())
	}
	// A journal left behind is harmless: the draft it would restore has
	// moved on, and the next lock of the name drops it.
	_ = d.dropJournal(name)
	return m, nil
}

// stage makes the draft's SKILL.md what edit makes of it and returns how
// to put the old one back; nothing when edit is nil or the draft has no
// SKILL.md to edit (Inspect says what is missing). A link standing for
// the draft's folder or its SKILL.md is refused, never written through.
// The old one is kept in the draft's journal (staged.go) until undo, or
// the caller's dropJournal once the promotion is done.
func (d *Folder) stage(name string, edit func([]byte) ([]byte, error)) (undo func() error, err error) {
	none := func() error { return nil }
	if edit == nil {
		return none, nil
	}
	dir := filepath.Join(d.dir, name)
	if err := realdir.Check(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return none, nil
		}
		return nil, fmt.Errorf("draft %s: %w", name, err)
	}
	path := filepath.Join(dir, "SKILL.md")
	old, err := atomicfile.ReadBounded(path, maxSkillMD)
	if errors.Is(err, fs.ErrNotExist) {
		return none, nil
	}
	if err != nil {
		return nil, fmt.Errorf("draft %s: read %s: %w", name, path, err)
	}
	out, err := edit(old)
	if err != nil {
		return nil, fmt.Errorf("draft %s: %s: %w", name, path, err)
	}
	if err := d.writeJournal(name, old, out); err != nil {
		return nil, err
	}
	if err := atomicfile.WriteFile(path, out, 0o644); err != nil {
		return nil, errors.Join(fmt.Errorf("draft %s: %w", name, err), d.dropJournal(name))
	}
	return func() error {
		if err := atomicfile.WriteFile(path, old, 0o644); err != nil {
			return fmt.Errorf("draft %s: put its SKILL.md back as it was (the next skillsync to take its lock will try again): %w", name, err)
		}
		return d.dropJournal(name)
	}, nil
}

func (d *Folder) promoteLocal(ctx context.Context, name, layerDir string, existing func() (*Existing, error), check func(Draft) error, now time.Time) (Moved, error) {
	dr, err := d.Inspect(ctx, name)
	if err != nil {
		return Moved{}, err
	}
	if !dr.Valid {
		return Moved{Draft: dr}, &InvalidError{Name: name, Problems: dr.Problems}
	}
	if check != nil {
		if err := check(dr); err != nil {
			return Moved{Draft: dr}, err
		}
	}
	if err := checkRealDirOrMissing(layerDir); err != nil {
		return Moved{Draft: dr}, fmt.Errorf("promote %s: %w", name, err)
	}
	if err := os.MkdirAll(layerDir, 0o755); err != nil {
		return Moved{Draft: dr}, fmt.Errorf("promote %s: %w", name, err)
	}
	p := Moved{Draft: dr, Dir: filepath.Join(layerDir, name)}
	var old *Existing
	if existing != nil {
		if old, err = existing(); err != nil {
			return p, fmt.Errorf("promote %s: %w", name, err)
		}
	}
	if old != nil {
		if h, err := d.dirHash(ctx, old.Dir); err == nil {
			p.ArchivedHash = h
		}
		if p.Archived, err = curator.Archive(layerDir, old.Dir, old.Name, now); err != nil {
			return p, fmt.Errorf("promote %s: the skill standing there is not archived, so nothing changed: %w", name, err)
		}
	}
	if err := renameNoReplace(dr.Dir, p.Dir); err != nil {
		if p.Archived != "" {
			if rerr := renameNoReplace(p.Archived, old.Dir); rerr != nil {
				err = fmt.Errorf("%w; the replaced skill stays archived in %s (skillsync restore %s)", err, p.Archived, old.Name)
			}
		}
		if errors.Is(err, fs.ErrExist) {
			return p, fmt.Errorf("promote %s: %s exists and is not a skill of that name in the catalog; move it away, the draft stays in the drafts", name, p.Dir)
		}
		return p, fmt.Errorf("promote %s: %w; the draft stays in the drafts", name, err)
	}
	return p, nil
}

// checkRealDirOrMissing refuses a layer directory that is a link or not
// a directory; a missing one is made by the caller.
func checkRealDirOrMissing(dir string) error {
	err := realdir.Check(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// dirHash is the skill hash of a local skill directory, as a sync
// computes it: without what git ignores there.
func (d *Folder) dirHash(ctx context.Context, dir string) (string, error) {
	fsys, err := (&Draft{Dir: dir, env: d.Env, layers: d.layers}).FS()
	if err != nil {
		return "", err
	}
	files, _, complete := (&Folder{}).scan(ctx, fsys)
	if !complete {
		return "", errors.New("incomplete")
	}
	h, err := materialize.SkillHash(ctx, fsys, files)
	return h.String(), err
}

// PromoteElsewhere takes the draft name under its lock, with edit (when
// set) changing its SKILL.md first (Folder.stage), refuses it with
// *InvalidError when it has a problem, and hands it to send, which
// puts the skill outside the workspace (into a source). When send succeeds
// the draft moves to .published/<name>-<stamp>/ and moved says where;
// when it fails the draft stays where it was, as it was. A draft that
// cannot be moved after send succeeded stays too, and keepErr says why.
func (d *Folder) PromoteElsewhere(ctx context.Context, name string, edit func([]byte) ([]byte, error), send func(Draft) error, now time.Time) (dr Draft, moved string, keepErr, err error) {
	lock, err := d.Lock(ctx, name)
	if err != nil {
		return Draft{}, "", nil, err
	}
	defer lock.Close()
	undo, err := d.stage(name, edit)
	if err != nil {
		return Draft{}, "", nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, undo())
		}
	}()
	if dr, err = d.Inspect(ctx, name); err != nil {
		return dr, "", nil, err
	}
	if !dr.Valid {
		return dr, "", nil, &InvalidError{Name: name, Problems: dr.Problems}
	}
	if err := send(dr); err != nil {
		return dr, "", nil, err
	}
	moved, _, keepErr = d.retireLocked(ctx, name, d.published, now)
	_ = d.dropJournal(name) // as in PromoteLocal
	return dr, moved, keepErr, nil
}
