package curator

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
	"sort"
	"strings"
	"time"

	"github.com/skillsync/skillsync/internal/flock"
	"github.com/skillsync/skillsync/internal/platform"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
	"github.com/skillsync/skillsync/workspace"
)

// The audit ops of the promotion gate.
const (
	OpProposed  Op = "proposed"
	OpPromoted  Op = "promoted"
	OpRejected  Op = "rejected"
	OpPublished Op = "published"
)

// Bounds on one draft, whoever wrote it: a proposal past them is refused,
// a draft past them has a problem and cannot be promoted.
const (
	// MaxDraftEntries is how many files and folders a draft may hold.
	MaxDraftEntries = 1000
	// MaxDraftBytes is the most a draft's files may add up to.
	MaxDraftBytes = 64 << 20
)

// DraftsSource is the source name problems of drafts carry.
const DraftsSource = "drafts"

// ErrNoDraft is a name the drafts folder does not hold.
var ErrNoDraft = errors.New("no such draft")

// ErrDraftExists is a proposal whose name a waiting draft already has.
var ErrDraftExists = errors.New("a draft of that name is waiting already")

// Drafts is a workspace's drafts folder, skills/_drafts/: skills proposed
// by agents or people, waiting for the promotion gate. Every method that
// changes a draft takes the draft's lock first, so a proposal, a
// promotion and a rejection of one name never overlap; drafts of other
// names go on at the same time.
type Drafts struct {
	dir, rejected, published, locks string
	// MaxFileSize caps each file of a draft (max_file_size); 0 is no cap
	// beyond MaxDraftBytes.
	MaxFileSize int64
	// LockWait is how long a method waits for a draft's lock.
	LockWait time.Duration
}

// DefaultDraftLockWait is how long a draft's lock is waited for: a
// promotion to a git source holds it while it pushes.
const DefaultDraftLockWait = 2 * time.Minute

// NewDrafts returns the drafts folder of the workspace l.
func NewDrafts(l workspace.Layout, maxFileSize int64) *Drafts {
	return &Drafts{dir: l.DraftsDir(), rejected: l.RejectedDir(), published: l.PublishedDir(), locks: l.DraftLocksDir(),
		MaxFileSize: maxFileSize, LockWait: DefaultDraftLockWait}
}

// Dir returns the drafts folder.
func (d *Drafts) Dir() string { return d.dir }

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
	// Diff compares the draft with the catalog's skill of its name, when
	// there is one; the caller fills it in.
	Diff *DiffSummary `json:"diff,omitempty"`
	// Promoted names where an automatic promotion (promotion.auto) took
	// the draft; "" while it waits.
	Promoted string `json:"promoted,omitempty"`
}

// FS returns the draft's files, confined to its directory.
func (d *Draft) FS() (fs.FS, error) { return repository.NewDirFS(d.Dir) }

// List returns the drafts waiting, by name, each inspected as Inspect
// does. Entries whose names start with "." (.rejected, .published, .locks,
// proposals under way) are not drafts, nor is anything whose name is not
// one safe path component.
func (d *Drafts) List(ctx context.Context) ([]Draft, error) {
	if err := checkRealDir(d.dir); err != nil {
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
		if len(out) >= MaxDraftEntries {
			return out, fmt.Errorf("drafts: more than %d drafts in %s; reject some", MaxDraftEntries, d.dir)
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
// draft over MaxDraftEntries or MaxDraftBytes. Inspect fails only when
// there is no such draft (ErrNoDraft) or the context ends.
func (d *Drafts) Inspect(ctx context.Context, name string) (Draft, error) {
	if !skill.ValidName(name) {
		return Draft{}, fmt.Errorf("draft %q: %w (not one safe path component)", name, ErrNoDraft)
	}
	dir := filepath.Join(d.dir, name)
	dr := Draft{Name: name, Dir: dir, Problems: []skill.Problem{}}
	info, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return dr, fmt.Errorf("draft %s: %w in %s", name, ErrNoDraft, d.dir)
	}
	problem := func(rule, file, format string, args ...any) {
		p := skill.Problem{Level: skill.Error, Rule: rule, Source: DraftsSource, Skill: name, Path: name, File: path.Join(name, file),
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
	fsys, err := repository.NewDirFS(dir)
	if err != nil {
		problem("draft-unreadable", "", "cannot open the draft: %v", err)
		return dr, nil
	}
	files, walkProblems, complete := d.scan(ctx, fsys)
	if err := ctx.Err(); err != nil {
		return dr, err
	}
	for _, wp := range walkProblems {
		problem(wp.rule, wp.file, "%s", wp.msg)
	}
	dr.Files = files
	s, loadProblems := skill.Options{Strict: true}.Load(fsys, name, name)
	for _, p := range loadProblems {
		p.Source, p.Skill = DraftsSource, name
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
func (d *Drafts) scan(ctx context.Context, fsys fs.FS) (files []skill.File, problems []walkProblem, complete bool) {
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
		if entries++; entries > MaxDraftEntries {
			problems = append(problems, walkProblem{"draft-too-large", "", fmt.Sprintf("the draft holds more than %d files and folders", MaxDraftEntries)})
			complete = false
			return fs.SkipAll
		}
		switch t := de.Type(); {
		case de.IsDir():
			if de.Name() == ".git" {
				problems = append(problems, walkProblem{"draft-git", name, ".git has no place in a skill; remove it"})
				return fs.SkipDir
			}
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
		if total += info.Size(); total > MaxDraftBytes {
			problems = append(problems, walkProblem{"draft-too-large", "", fmt.Sprintf("the draft's files add up to more than %d bytes", MaxDraftBytes)})
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
func (d *Drafts) Lock(ctx context.Context, name string) (io.Closer, error) {
	if !skill.ValidName(name) {
		return nil, fmt.Errorf("draft %q: not one safe path component", name)
	}
	if err := realDir(d.dir); err != nil {
		return nil, fmt.Errorf("drafts: %w", err)
	}
	if err := realDir(d.locks); err != nil {
		return nil, fmt.Errorf("drafts: %w", err)
	}
	key := layering.Key(name)
	if !skill.ValidName(key) {
		sum := hex.EncodeToString([]byte(key))
		key = sum[:min(len(sum), 200)]
	}
	l, err := flock.Acquire(ctx, filepath.Join(d.locks, key+".lock"), d.LockWait)
	if err != nil {
		return nil, fmt.Errorf("draft %s: another skillsync is working on it: %w", name, err)
	}
	return l, nil
}

// ProposeDir copies the skill directory src into the drafts as name and
// returns the new draft, inspected. It refuses, copying nothing, a
// symbolic link that leaves src or points at a directory, a FIFO, socket
// or device, a file over MaxFileSize, a skill over MaxDraftEntries or
// MaxDraftBytes, a src without a SKILL.md, and a name a draft already has
// (ErrDraftExists). A link to a file inside src is copied as that file.
// Files are written with O_NOFOLLOW|O_EXCL into a fresh directory that
// appears under its name in one rename, so a reader never sees half a
// draft. now becomes the draft's created time.
func (d *Drafts) ProposeDir(ctx context.Context, src, name string, now time.Time) (Draft, error) {
	srcFS, err := repository.NewDirFS(src)
	if err != nil {
		return Draft{}, fmt.Errorf("propose %s: %w", src, err)
	}
	if info, err := srcFS.Stat("SKILL.md"); err != nil || !info.Mode().IsRegular() {
		return Draft{}, fmt.Errorf("propose %s: no SKILL.md in it", src)
	}
	return d.propose(ctx, name, now, func(dst *os.Root) error { return d.copyDir(ctx, srcFS, src, dst) })
}

// ProposeFiles writes files (slash-separated path to content) into the
// drafts as name, under the bounds of ProposeDir. Paths must be valid
// fs paths, with no .git component; SKILL.md must be among them.
func (d *Drafts) ProposeFiles(ctx context.Context, name string, files map[string][]byte, now time.Time) (Draft, error) {
	if _, ok := files["SKILL.md"]; !ok {
		return Draft{}, fmt.Errorf("propose %s: the files hold no SKILL.md", name)
	}
	if len(files) > MaxDraftEntries {
		return Draft{}, fmt.Errorf("propose %s: %d files, more than the %d a draft may hold", name, len(files), MaxDraftEntries)
	}
	paths := make([]string, 0, len(files))
	var total int64
	for p, data := range files {
		if !fs.ValidPath(p) || p == "." || strings.Contains(p, "\\") || containsPart(p, ".git") {
			return Draft{}, fmt.Errorf("propose %s: file path %q: want a relative slash-separated path without . , .. or .git", name, p)
		}
		if d.MaxFileSize > 0 && int64(len(data)) > d.MaxFileSize {
			return Draft{}, fmt.Errorf("propose %s: %s is %d bytes, over max_file_size %d", name, p, len(data), d.MaxFileSize)
		}
		if total += int64(len(data)); total > MaxDraftBytes {
			return Draft{}, fmt.Errorf("propose %s: the files add up to more than %d bytes", name, MaxDraftBytes)
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return d.propose(ctx, name, now, func(dst *os.Root) error {
		for _, p := range paths {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := mkdirs(dst, path.Dir(p)); err != nil {
				return err
			}
			mode := fs.FileMode(0o644)
			if strings.HasPrefix(string(files[p]), "#!") {
				mode = 0o755
			}
			if err := writeNew(dst, p, mode, strings.NewReader(string(files[p])), int64(len(files[p]))); err != nil {
				return err
			}
		}
		return nil
	})
}

func containsPart(p, part string) bool {
	for _, c := range strings.Split(p, "/") {
		if c == part {
			return true
		}
	}
	return false
}

// propose fills a fresh staging directory with fill and renames it into
// place as the draft name, never over an existing one.
func (d *Drafts) propose(ctx context.Context, name string, now time.Time, fill func(*os.Root) error) (Draft, error) {
	if !skill.ValidName(name) {
		return Draft{}, fmt.Errorf("propose %q: the name is not one safe path component", name)
	}
	lock, err := d.Lock(ctx, name)
	if err != nil {
		return Draft{}, err
	}
	defer lock.Close()
	dst := filepath.Join(d.dir, name)
	if _, err := os.Lstat(dst); err == nil {
		return Draft{}, fmt.Errorf("propose %s: %w in %s: promote or reject it first", name, ErrDraftExists, dst)
	}
	stage, err := os.MkdirTemp(d.dir, ".incoming-")
	if err != nil {
		return Draft{}, fmt.Errorf("propose %s: %w", name, err)
	}
	defer os.RemoveAll(stage) // gone after the rename; RemoveAll never follows a link
	root, err := os.OpenRoot(stage)
	if err != nil {
		return Draft{}, fmt.Errorf("propose %s: %w", name, err)
	}
	err = fill(root)
	root.Close()
	if err != nil {
		return Draft{}, fmt.Errorf("propose %s: %w", name, err)
	}
	if err := os.Chmod(stage, 0o755); err != nil {
		return Draft{}, fmt.Errorf("propose %s: %w", name, err)
	}
	if err := renameNoReplace(stage, dst); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return Draft{}, fmt.Errorf("propose %s: %w in %s", name, ErrDraftExists, dst)
		}
		return Draft{}, fmt.Errorf("propose %s: %w", name, err)
	}
	if !now.IsZero() {
		_ = os.Chtimes(dst, now, now)
	}
	return d.Inspect(ctx, name)
}

// copyDir copies the regular files of src into dst, refusing what
// ProposeDir refuses.
func (d *Drafts) copyDir(ctx context.Context, src *repository.DirFS, srcName string, dst *os.Root) error {
	entries := 0
	var total int64
	return fs.WalkDir(src, ".", func(name string, de fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("read %s: %w", filepath.Join(srcName, name), err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if name == "." {
			return nil
		}
		if entries++; entries > MaxDraftEntries {
			return fmt.Errorf("%s holds more than %d files and folders", srcName, MaxDraftEntries)
		}
		t := de.Type()
		if de.IsDir() {
			if de.Name() == ".git" {
				return fs.SkipDir
			}
			if err := dst.Mkdir(name, 0o755); err != nil {
				return err
			}
			return nil
		}
		if t&fs.ModeSymlink != 0 {
			info, err := src.Stat(name)
			switch {
			case errors.Is(err, repository.ErrOutside):
				return fmt.Errorf("%s is a symbolic link that points outside the skill directory; copy the file into the skill instead", name)
			case err != nil:
				return fmt.Errorf("%s is a symbolic link that cannot be followed: %w", name, err)
			case info.IsDir():
				return fmt.Errorf("%s is a symbolic link to a directory; copy the files instead", name)
			case !info.Mode().IsRegular():
				return fmt.Errorf("%s is a symbolic link to a %s, not a regular file", name, fileType(info))
			}
		} else if !t.IsRegular() {
			return fmt.Errorf("%s is a %s, not a regular file", name, typeName(t))
		}
		f, err := src.Open(name)
		if err != nil {
			return fmt.Errorf("open %s: %w", name, err)
		}
		defer f.Close()
		info, err := f.Stat()
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("%s is a %s, not a regular file", name, fileType(info))
		}
		if d.MaxFileSize > 0 && info.Size() > d.MaxFileSize {
			return fmt.Errorf("%s is %d bytes, over max_file_size %d", name, info.Size(), d.MaxFileSize)
		}
		if total += info.Size(); total > MaxDraftBytes {
			return fmt.Errorf("the skill's files add up to more than %d bytes", MaxDraftBytes)
		}
		mode := fs.FileMode(0o644)
		if info.Mode()&0o111 != 0 {
			mode = 0o755
		}
		return writeNew(dst, name, mode, f, info.Size())
	})
}

// mkdirs makes dir and its parents inside root.
func mkdirs(root *os.Root, dir string) error {
	if dir == "." {
		return nil
	}
	if err := mkdirs(root, path.Dir(dir)); err != nil {
		return err
	}
	err := root.Mkdir(dir, 0o755)
	if errors.Is(err, fs.ErrExist) {
		info, serr := root.Lstat(dir)
		if serr == nil && info.IsDir() {
			return nil
		}
	}
	return err
}

// writeNew creates name in root, never through a link and never over an
// existing file (O_EXCL: os.Root never follows a link then, on any system), and copies exactly size bytes from r into it.
func writeNew(root *os.Root, name string, mode fs.FileMode, r io.Reader, size int64) error {
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, io.LimitReader(r, size+1))
	if err == nil && n != size {
		err = fmt.Errorf("%s changed while it was copied", name)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// Reject moves the draft name to .rejected/<name>-<UTC stamp>/ and
// returns that path. The draft as it was is returned too, for the audit.
func (d *Drafts) Reject(ctx context.Context, name string, now time.Time) (string, Draft, error) {
	return d.retire(ctx, name, d.rejected, now)
}

// Published moves the draft name, once its skill is in a git source, to
// .published/<name>-<UTC stamp>/ and returns that path.
func (d *Drafts) Published(ctx context.Context, name string, now time.Time) (string, error) {
	dst, _, err := d.retire(ctx, name, d.published, now)
	return dst, err
}

func (d *Drafts) retire(ctx context.Context, name, into string, now time.Time) (string, Draft, error) {
	lock, err := d.Lock(ctx, name)
	if err != nil {
		return "", Draft{}, err
	}
	defer lock.Close()
	return d.retireLocked(ctx, name, into, now)
}

func (d *Drafts) retireLocked(ctx context.Context, name, into string, now time.Time) (string, Draft, error) {
	dr, err := d.Inspect(ctx, name)
	if err != nil {
		return "", dr, err
	}
	if err := realDir(into); err != nil {
		return "", dr, fmt.Errorf("draft %s: %w", name, err)
	}
	dst := filepath.Join(into, name+"-"+now.UTC().Format(archiveStamp))
	if err := renameNoReplace(dr.Dir, dst); err != nil {
		return "", dr, fmt.Errorf("draft %s: move to %s: %w", name, dst, err)
	}
	return dst, dr, nil
}

// renameNoReplace renames from to to, failing with fs.ErrExist when to
// exists, even as an empty directory, which plain rename(2) would
// replace.
func renameNoReplace(from, to string) error { return platform.RenameNoReplace(from, to) }
