package drafts

import (
	"bytes"
	"context"
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

	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// ProposeDir copies the skill directory src into the drafts as name and
// returns the new draft, inspected. It refuses, copying nothing, a
// symbolic link that leaves src or points at a directory, a FIFO, socket
// or device, a file over MaxFileSize, a skill over MaxEntries or
// MaxBytes, a src without a SKILL.md, and a name a draft already has
// (ErrExists). A link to a file inside src is copied as that file.
// Files are written with O_NOFOLLOW|O_EXCL into a fresh directory that
// appears under its name in one rename, so a reader never sees half a
// draft. now becomes the draft's created time.
//
// A src in a git work tree is copied as a sync reads it: what git
// ignores there (a .env, node_modules/) is left out of the draft, and
// so of every promotion of it.
func (d *Folder) ProposeDir(ctx context.Context, src, name string, now time.Time) (Draft, error) {
	dr, _, err := d.proposeDir(ctx, src, name, now, false, nil)
	return dr, err
}

// proposeDir is ProposeDir; with rename, the copy's SKILL.md frontmatter
// gives name as the skill's name (every other byte as in src), so a draft
// proposed under a new name can be promoted under it. left names what git
// ignores in src, which was not copied (repository.Ignored). A src below
// one of layers (the local layers' folders) is read as the sync of its
// layer reads it (repository.OpenGitViewIn).
func (d *Folder) proposeDir(ctx context.Context, src, name string, now time.Time, rename bool, layers []string) (dr Draft, left Ignored, err error) {
	srcFS, err := repository.OpenGitViewIn(src, layers, d.Env)
	if err != nil {
		return Draft{}, left, fmt.Errorf("propose %s: %w", src, err)
	}
	if info, err := srcFS.Stat("SKILL.md"); err != nil || !info.Mode().IsRegular() {
		if repository.SkillFileIgnored(srcFS) {
			return Draft{}, left, fmt.Errorf("propose %s: its SKILL.md is one a .gitignore rule leaves out, so git will not commit it and no sync takes it: remove the rule, or take SKILL.md back with !SKILL.md", src)
		}
		return Draft{}, left, fmt.Errorf("propose %s: no SKILL.md in it", src)
	}
	if left.Names, left.More, err = repository.Ignored(ctx, srcFS); err != nil {
		return Draft{}, left, fmt.Errorf("propose %s: list what git ignores in it: %w", src, err)
	}
	left.Whole = repository.GitIgnoresWhole(srcFS)
	dr, err = d.propose(ctx, name, now, func(dst *os.Root) error {
		if err := d.copyDir(ctx, srcFS, src, dst); err != nil {
			return err
		}
		if rename {
			return renameIn(dst, name)
		}
		return nil
	})
	return dr, left, err
}

// Ignored is what git ignores in a folder, left out of what was read of
// it: at most repository.MaxIgnoredListed names (a folder's with a
// trailing slash), and how many more there are.
type Ignored struct {
	Names []string `json:"names,omitempty"`
	More  int      `json:"more,omitempty"`
	// Whole says why git ignores the folder itself, which was read all
	// the same (by its own .gitignore files alone); nil when it does not.
	Whole *repository.IgnoredFolder `json:"whole,omitempty"`
}

// String says what was left out, for a note: "" when nothing was.
func (ig Ignored) String() string {
	if len(ig.Names) == 0 {
		return ""
	}
	s := strings.Join(ig.Names, ", ")
	if ig.More > 0 {
		s += fmt.Sprintf(" and %d more", ig.More)
	}
	return s
}

// renameIn writes name into the frontmatter of the SKILL.md in dst.
func renameIn(dst *os.Root, name string) error {
	data, err := dst.ReadFile("SKILL.md")
	if err != nil {
		return fmt.Errorf("read SKILL.md: %w", err)
	}
	out, ok := withName(data, name)
	if !ok || string(out) == string(data) {
		return nil // no frontmatter: the draft's problems will say so
	}
	info, err := dst.Lstat("SKILL.md")
	if err != nil {
		return err
	}
	if err := dst.Remove("SKILL.md"); err != nil {
		return fmt.Errorf("rename in SKILL.md: %w", err)
	}
	return writeNew(dst, "SKILL.md", info.Mode().Perm(), bytes.NewReader(out), int64(len(out)))
}

// ProposeFiles writes files (slash-separated path to content) into the
// drafts as name, under the bounds of ProposeDir. Paths must be valid
// fs paths, with no .git component; SKILL.md must be among them.
func (d *Folder) ProposeFiles(ctx context.Context, name string, files map[string][]byte, now time.Time) (Draft, error) {
	if _, ok := files["SKILL.md"]; !ok {
		return Draft{}, fmt.Errorf("propose %s: the files hold no SKILL.md", name)
	}
	if len(files) > MaxEntries {
		return Draft{}, fmt.Errorf("propose %s: %d files, more than the %d a draft may hold", name, len(files), MaxEntries)
	}
	paths := make([]string, 0, len(files))
	var total int64
	for p, data := range files {
		if !fs.ValidPath(p) || p == "." || strings.Contains(p, "\\") || skill.GitPath(p) {
			return Draft{}, fmt.Errorf("propose %s: file path %q: want a relative slash-separated path without . , .. or .git", name, p)
		}
		if d.MaxFileSize > 0 && int64(len(data)) > d.MaxFileSize {
			return Draft{}, fmt.Errorf("propose %s: %s is %d bytes, over max_file_size %d", name, p, len(data), d.MaxFileSize)
		}
		if total += int64(len(data)); total > MaxBytes {
			return Draft{}, fmt.Errorf("propose %s: the files add up to more than %d bytes", name, MaxBytes)
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

// propose fills a fresh staging directory with fill and renames it into
// place as the draft name, never over an existing one.
func (d *Folder) propose(ctx context.Context, name string, now time.Time, fill func(*os.Root) error) (Draft, error) {
	if !skill.ValidName(name) {
		return Draft{}, fmt.Errorf("propose %q: the name is not one safe path component", name)
	}
	lock, err := d.Lock(ctx, name)
	if err != nil {
		return Draft{}, err
	}
	defer lock.Close()
	dst := filepath.Join(d.dir, name)
	if same, ok := d.sameName(name); ok {
		// Names compare without case (as the lock's key does): a second
		// draft of pdf as PDF would promote over the first, and on a
		// folder that ignores case it is the first.
		return Draft{}, fmt.Errorf("propose %s: %w in %s: promote or reject it first", name, ErrExists, filepath.Join(d.dir, same))
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
			return Draft{}, fmt.Errorf("propose %s: %w in %s", name, ErrExists, dst)
		}
		return Draft{}, fmt.Errorf("propose %s: %w", name, err)
	}
	if !now.IsZero() {
		_ = os.Chtimes(dst, now, now)
	}
	return d.Inspect(ctx, name)
}

// sameName returns the waiting draft whose name is name's, case aside.
func (d *Folder) sameName(name string) (string, bool) {
	entries, err := os.ReadDir(d.dir)
	if err != nil {
		return "", false
	}
	key := layering.Key(name)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") && layering.Key(e.Name()) == key {
			return e.Name(), true
		}
	}
	return "", false
}

// copyDir copies the regular files of src into dst, refusing what
// ProposeDir refuses.
func (d *Folder) copyDir(ctx context.Context, src repository.FolderFS, srcName string, dst *os.Root) error {
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
		if entries++; entries > MaxEntries {
			return fmt.Errorf("%s holds more than %d files and folders", srcName, MaxEntries)
		}
		t := de.Type()
		if skill.GitName(de.Name()) {
			if de.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if de.IsDir() {
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
		if total += info.Size(); total > MaxBytes {
			return fmt.Errorf("the skill's files add up to more than %d bytes", MaxBytes)
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
// existing file, and copies exactly size bytes from r into it.
func writeNew(root *os.Root, name string, mode fs.FileMode, r io.Reader, size int64) error {
	// O_EXCL never follows a link at name, and os.Root none out of root.
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
