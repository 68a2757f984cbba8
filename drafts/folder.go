package drafts

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/internal/flock"
	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/internal/realdir"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
	"github.com/skillsync/skillsync/workspace"
)

// Bounds on one draft, whoever wrote it: a proposal past them is refused,
// a draft past them has a problem and cannot be promoted.
const (
	// MaxEntries is how many files and folders a draft may hold.
	MaxEntries = 1000
	// MaxBytes is the most a draft's files may add up to.
	MaxBytes = 64 << 20
)

// ProblemSource is the source name problems of drafts carry.
const ProblemSource = "drafts"

// ErrNoDraft is a name the drafts folder does not hold.
var ErrNoDraft = errors.New("no such draft")

// ErrExists is a proposal whose name a waiting draft already has.
var ErrExists = errors.New("a draft of that name is waiting already")

// Folder is a workspace's drafts folder, skills/_drafts/: skills proposed
// by agents or people, waiting for the promotion gate. Every method that
// changes a draft takes the draft's lock first, so a proposal, a
// promotion and a rejection of one name never overlap; drafts of other
// names go on at the same time.
type Folder struct {
	dir, rejected, published, locks string
	// MaxFileSize caps each file of a draft (max_file_size); 0 is no cap
	// beyond MaxBytes.
	MaxFileSize int64
	// LockWait is how long a method waits for a draft's lock.
	LockWait time.Duration
	// Env is the host whose git config says what git ignores: a draft,
	// and a folder proposed, in a git work tree is read as a sync reads
	// it (repository.GitView). The zero Env is the process's.
	Env hostenv.Env
	// layers are the folders of the workspace's and the user's layers:
	// a draft (skills/_drafts/NAME) and a layer's skill are read as the
	// sync of the layer reads what is below it, the layer's .gitignore
	// files above them applied (repository.OpenGitViewIn). A draft
	// written by hand outside any work tree, judged by its own folder
	// alone, took a prod.env that skills/.gitignore names into a
	// promotion, which a proposal of the same folder leaves out.
	layers []string
}

// DefaultLockWait is how long a draft's lock is waited for: a
// promotion to a git source holds it while it pushes.
const DefaultLockWait = 2 * time.Minute

// NewFolder returns the drafts folder of the workspace l.
func NewFolder(l workspace.Layout, maxFileSize int64) *Folder {
	return &Folder{dir: l.DraftsDir(), rejected: l.RejectedDir(), published: l.PublishedDir(), locks: l.DraftLocksDir(),
		MaxFileSize: maxFileSize, LockWait: DefaultLockWait, layers: []string{l.SkillsDir(), l.UserSkillsDir()}}
}

// WithEnv sets d.Env and returns d.
func (d *Folder) WithEnv(env hostenv.Env) *Folder {
	d.Env = env
	return d
}

// Dir returns the drafts folder.
func (d *Folder) Dir() string { return d.dir }

// Draft is one proposed skill as the gate sees it.
type Draft struct {
	Name string `json:"name"`
	// Dir is the draft's directory.
	Dir         string `json:"dir"`
	Description string `json:"description,omitempty"`
	// Author is the frontmatter's author, or metadata.author.
	Author string `json:"author,omitempty"`
	// Created is when the draft's directory last changed; a proposal sets
	// it to the moment it was made.
	Created time.Time `json:"created"`
	// Valid is set when strict validation found no problem: only then can
	// the draft be promoted.
	Valid    bool            `json:"valid"`
	Problems []skill.Problem `json:"problems"`
	// Hash is the skill hash of the draft's files (materialize.SkillHash),
	// "" when they could not all be read.
	Hash  string       `json:"hash,omitempty"`
	Files []skill.File `json:"-"`
	// Ignored is what git ignores in the draft's folder: it is not among
	// Files, is not validated or hashed, and is never promoted or
	// published, as a sync never takes it.
	Ignored Ignored `json:"ignored,omitzero"`
	// Diff compares the draft with the catalog's skill of its name, when
	// there is one; the caller fills it in.
	Diff *DiffSummary `json:"diff,omitempty"`
	// Promoted names where an automatic promotion (promotion.auto) took
	// the draft; "" while it waits.
	Promoted string `json:"promoted,omitempty"`

	env    hostenv.Env // the Folder's, for FS
	layers []string    // the Folder's, for FS
}

// FS returns the draft's files, confined to its directory, without what
// git ignores there (or, outside a work tree, what the .gitignore files
// of the layer's folder above it name): the files Inspect listed.
func (d *Draft) FS() (fs.FS, error) { return repository.OpenGitViewIn(d.Dir, d.layers, d.env) }

// List returns the drafts waiting, by name, each inspected as Inspect
// does. Entries whose names start with "." (.rejected, .published, .locks,
// proposals under way) are not drafts, nor is anything whose name is not
// one safe path component.
func (d *Folder) List(ctx context.Context) ([]Draft, error) {
	if err := realdir.Check(d.dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("drafts: %w", err)
	}
	entries, err := os.ReadDir(d.dir)
	if err != nil {
		return nil, fmt.Errorf("drafts: %w", err)
	}
	var out []Draft
	for _, en := range entries {
		if strings.HasPrefix(en.Name(), ".") || !skill.ValidName(en.Name()) {
			continue
		}
		if len(out) >= MaxEntries {
			return out, fmt.Errorf("drafts: more than %d drafts in %s; reject some", MaxEntries, d.dir)
		}
		dr, err := d.Inspect(ctx, en.Name())
		if err != nil {
			return out, err
		}
		out = append(out, dr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Inspect reads the draft name and validates it strictly: the Agent Skills
// rules with every warning an error, plus the gate's own. A draft holds
// regular files only: a symbolic link (wherever it points), a FIFO, a
// socket or a device is a problem, as are a file over MaxFileSize and a
// draft over MaxEntries or MaxBytes. Inspect fails only when
// there is no such draft (ErrNoDraft) or the context ends.
func (d *Folder) Inspect(ctx context.Context, name string) (Draft, error) {
	if !skill.ValidName(name) {
		return Draft{}, fmt.Errorf("draft %q: %w (not one safe path component)", name, ErrNoDraft)
	}
	dir := filepath.Join(d.dir, name)
	dr := Draft{Name: name, Dir: dir, Problems: []skill.Problem{}, env: d.Env, layers: d.layers}
	info, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return dr, fmt.Errorf("draft %s: %w in %s", name, ErrNoDraft, d.dir)
	}
	problem := func(rule, file, format string, args ...any) {
		p := skill.Problem{Level: skill.Error, Rule: rule, Source: ProblemSource, Skill: name, Path: name, File: path.Join(name, file),
			Message: fmt.Sprintf(format, args...)}
		dr.Problems = append(dr.Problems, p)
	}
	switch {
	case err != nil:
		problem("draft-unreadable", "", "cannot read the draft: %v", err)
		return dr, nil
	case info.Mode()&fs.ModeSymlink != 0:
		problem("draft-symlink", "", "the draft is a symbolic link; a draft is a directory of regular files")
		return dr, nil
	case !info.IsDir():
		problem("draft-not-directory", "", "the draft is a %s, not a directory", fileType(info))
		return dr, nil
	}
	dr.Created = info.ModTime().UTC().Truncate(time.Second)
	// Read as a sync reads the folder once promoted: what git ignores in
	// it is left out of the checks, the hash and what a promotion sends.
	fsys, err := repository.OpenGitViewIn(dir, d.layers, d.Env)
	if err != nil {
		problem("draft-unreadable", "", "cannot open the draft: %v", err)
		return dr, nil
	}
	files, walkProblems, complete := d.scan(ctx, fsys)
	if dr.Ignored.Names, dr.Ignored.More, err = repository.Ignored(ctx, fsys); err != nil && ctx.Err() == nil {
		problem("draft-unreadable", "", "cannot list what git ignores in the draft: %v", err)
	}
	if err := ctx.Err(); err != nil {
		return dr, err
	}
	reported := map[string]bool{}
	for _, wp := range walkProblems {
		problem(wp.rule, wp.file, "%s", wp.msg)
		reported[wp.file] = true
	}
	// What the catalog would refuse of the files (a name with a control
	// character, ...) the gate refuses too: a promoted skill that every
	// listing then skips would be a promotion of nothing. A draft past
	// MaxEntries or MaxBytes is refused already, and not walked again: the
	// second walk has no bound of its own.
	if !slices.ContainsFunc(walkProblems, func(wp walkProblem) bool { return wp.rule == "draft-too-large" }) {
		_, listed := skill.ListFiles(fsys, ".", 0)
		for _, p := range listed {
			if !reported[p.File] {
				problem(p.Rule, p.File, "%s", p.Message)
			}
		}
	}
	dr.Files = files
	s, loadProblems := skill.Options{Strict: true}.Load(fsys, name, name)
	for _, p := range loadProblems {
		p.Source, p.Skill = ProblemSource, name
		dr.Problems = append(dr.Problems, p)
	}
	dr.Problems = skill.Strict(dr.Problems)
	dr.Description = s.Description
	dr.Author = s.Author
	if dr.Author == "" {
		dr.Author = s.Metadata["author"]
	}
	if complete {
		if h, err := materialize.SkillHash(ctx, fsys, files); err == nil {
			dr.Hash = h.String()
		} else if ctx.Err() == nil {
			problem("draft-unreadable", "", "%v", err)
		}
	}
	dr.Valid = len(dr.Problems) == 0
	return dr, nil
}

// walkProblem is what scan found wrong, before it is made a Problem.
type walkProblem struct{ rule, file, msg string }

// scan lists a draft's regular files in path order without following any
// link, and reports everything else. complete is false when it stopped at
// a bound.
func (d *Folder) scan(ctx context.Context, fsys fs.FS) (files []skill.File, problems []walkProblem, complete bool) {
	entries := 0
	var total int64
	complete = true
	_ = fs.WalkDir(fsys, ".", func(name string, de fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			complete = false
			return fs.SkipAll
		}
		if err != nil {
			problems = append(problems, walkProblem{"file-unreadable", name, fmt.Sprintf("cannot read %s: %v", name, err)})
			complete = false
			if de != nil && de.IsDir() && name != "." {
				return fs.SkipDir
			}
			return nil
		}
		if name == "." {
			return nil
		}
		if entries++; entries > MaxEntries {
			problems = append(problems, walkProblem{"draft-too-large", "", fmt.Sprintf("the draft holds more than %d files and folders", MaxEntries)})
			complete = false
			return fs.SkipAll
		}
		switch t := de.Type(); {
		case skill.GitName(de.Name()):
			problems = append(problems, walkProblem{"draft-git", name, name + " is a git repository's folder to git, which has no place in a skill; remove it"})
			if de.IsDir() {
				return fs.SkipDir
			}
			return nil
		case de.IsDir():
			return nil
		case t&fs.ModeSymlink != 0:
			problems = append(problems, walkProblem{"draft-symlink", name, name + " is a symbolic link; a draft holds regular files only (skillsync propose copies a link's target when it stays inside the skill)"})
			return nil
		case !t.IsRegular():
			problems = append(problems, walkProblem{"file-not-regular", name, fmt.Sprintf("%s is a %s, not a regular file", name, typeName(t))})
			return nil
		}
		info, err := de.Info()
		if err != nil {
			problems = append(problems, walkProblem{"file-unreadable", name, fmt.Sprintf("cannot read %s: %v", name, err)})
			complete = false
			return nil
		}
		if d.MaxFileSize > 0 && info.Size() > d.MaxFileSize {
			problems = append(problems, walkProblem{"file-too-large", name, fmt.Sprintf("%s is %d bytes, over max_file_size %d", name, info.Size(), d.MaxFileSize)})
			complete = false
			return nil
		}
		if total += info.Size(); total > MaxBytes {
			problems = append(problems, walkProblem{"draft-too-large", "", fmt.Sprintf("the draft's files add up to more than %d bytes", MaxBytes)})
			complete = false
			return fs.SkipAll
		}
		files = append(files, skill.File{Path: name, Mode: info.Mode(), Size: info.Size()})
		return nil
	})
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, problems, complete
}

func typeName(t fs.FileMode) string {
	switch {
	case t&fs.ModeNamedPipe != 0:
		return "FIFO"
	case t&fs.ModeSocket != 0:
		return "socket"
	case t&fs.ModeDevice != 0:
		return "device"
	}
	return "special file (" + t.String() + ")"
}

func fileType(info fs.FileInfo) string {
	if info.Mode().IsRegular() {
		return "regular file"
	}
	return typeName(info.Mode().Type())
}

// Lock takes the lock of the draft name (case-insensitive), waiting up
// to LockWait. Close releases it.
func (d *Folder) Lock(ctx context.Context, name string) (io.Closer, error) {
	if !skill.ValidName(name) {
		return nil, fmt.Errorf("draft %q: not one safe path component", name)
	}
	if err := realdir.Ensure(d.dir); err != nil {
		return nil, fmt.Errorf("drafts: %w", err)
	}
	if err := realdir.Ensure(d.locks); err != nil {
		return nil, fmt.Errorf("drafts: %w", err)
	}
	l, err := flock.Acquire(ctx, filepath.Join(d.locks, lockKey(name)+".lock"), d.LockWait)
	if err != nil {
		return nil, fmt.Errorf("draft %s: another skillsync is working on it: %w", name, err)
	}
	// Let go unless handed over, a panic reading the journal included:
	// the daemon and serve go on past one, and the draft would stay
	// locked until the collector closed the file.
	held := false
	defer func() {
		if !held {
			l.Close()
		}
	}()
	// A promotion killed after it edited the draft's SKILL.md left it
	// edited (staged.go).
	if err := d.recoverJournal(name); err != nil {
		return nil, err
	}
	held = true
	return l, nil
}

// lockKey names the files of name's lock: one for every spelling that
// layering.Key folds together.
func lockKey(name string) string {
	key := layering.Key(name)
	if !skill.ValidName(key) {
		sum := hex.EncodeToString([]byte(key))
		key = sum[:min(len(sum), 200)]
	}
	return key
}

// Reject moves the draft name to .rejected/<name>-<UTC stamp>/ and
// returns that path. The draft as it was is returned too, for the audit.
func (d *Folder) Reject(ctx context.Context, name string, now time.Time) (string, Draft, error) {
	return d.retire(ctx, name, d.rejected, now)
}

func (d *Folder) retire(ctx context.Context, name, into string, now time.Time) (string, Draft, error) {
	lock, err := d.Lock(ctx, name)
	if err != nil {
		return "", Draft{}, err
	}
	defer lock.Close()
	return d.retireLocked(ctx, name, into, now)
}

func (d *Folder) retireLocked(ctx context.Context, name, into string, now time.Time) (string, Draft, error) {
	dr, err := d.Inspect(ctx, name)
	if err != nil {
		return "", dr, err
	}
	if err := realdir.Ensure(into); err != nil {
		return "", dr, fmt.Errorf("draft %s: %w", name, err)
	}
	// Two drafts of one name retired within the stamp's second each get
	// a folder: the second one's ends in -2.
	stamp := filepath.Join(into, name+"-"+now.UTC().Format(curator.ArchiveStamp))
	dst := stamp
	for n := 2; ; n++ {
		err := renameNoReplace(dr.Dir, dst)
		if err == nil {
			return dst, dr, nil
		}
		if !errors.Is(err, fs.ErrExist) || n > 100 {
			return "", dr, fmt.Errorf("draft %s: move to %s: %w", name, dst, err)
		}
		dst = fmt.Sprintf("%s-%d", stamp, n)
	}
}
