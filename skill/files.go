package skill

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"

	"github.com/skillsync/skillsync/internal/termtext"
)

// File is one regular file of a skill.
type File struct {
	// Path is relative to the skill directory, slash-separated.
	Path string
	Mode fs.FileMode
	Size int64
}

// ListFiles walks a skill's files in lexical order, which makes the result
// deterministic. Symbolic links are resolved through fsys, which decides
// whether their target is allowed; a link fsys refuses, a link to a
// directory, and anything that is not a regular file are skipped with a
// problem. A file or directory git would take for a repository's folder
// (GitName) is left out, and never entered. maxSize, when above
// zero, makes a larger file an error of the whole skill; the config's
// max_file_size sets it.
func ListFiles(fsys fs.FS, skillPath string, maxSize int64) ([]File, []Problem) {
	var files []File
	var problems []Problem
	skip := func(level Level, rule, name, format string, args ...any) {
		problems = append(problems, locate(Problem{Level: level, Rule: rule, Message: fmt.Sprintf(format, args...)}, skillPath, name))
	}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && name != "." {
				// Its files would be missing from every copy, unseen.
				skip(Error, "dir-unreadable", name, "cannot read folder %s: %v; the whole skill is skipped", name, err)
				return fs.SkipDir
			}
			skip(Warning, "file-unreadable", name, "cannot read %s: %v", name, err)
			return nil
		}
		if r := unsafeRune(d.Name()); r >= 0 {
			// Written as it is, such a name would reach every listing of a
			// target and act on the terminal that shows it.
			skip(Error, "file-name-control-char", name, "%s holds the control or formatting character %U in its name; the whole skill is skipped: rename the file", termtext.Escape(name), r)
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if GitName(d.Name()) {
			// A local skill may be a clone, or a submodule's checkout:
			// its .git is left out without a word. Anything else that
			// git would take for one is left out too, and said.
			if d.Name() != ".git" {
				skip(Warning, "git-folder", name, "%s is left out: git would take it for a repository's folder, and run what its config says", name)
			}
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err == nil && info.Mode()&fs.ModeSymlink != 0 {
			info, err = fs.Stat(fsys, name)
			if errors.Is(err, fs.ErrPermission) {
				// Its file would be missing from every copy, unseen.
				skip(Error, "file-unreadable", name, "cannot read %s, a symbolic link: %v; the whole skill is skipped", name, err)
				return nil
			}
			if err != nil {
				skip(Warning, "symlink-outside", name, "symbolic link %s is skipped: %v", name, err)
				return nil
			}
			if info.IsDir() {
				skip(Warning, "symlink-dir", name, "symbolic link %s points to a directory and is skipped; copy the files instead", name)
				return nil
			}
		}
		switch {
		case err != nil:
			skip(Warning, "file-unreadable", name, "cannot read %s: %v", name, err)
		case !info.Mode().IsRegular():
			skip(Warning, "file-not-regular", name, "%s is not a regular file (%s) and is skipped", name, info.Mode().Type())
		case maxSize > 0 && info.Size() > maxSize:
			skip(Error, "file-too-large", name, "%s is %d bytes, over the limit of %d bytes; the whole skill is skipped: make the file smaller, or raise max_file_size in skillsync.yaml", name, info.Size(), maxSize)
		default:
			files = append(files, File{Path: name, Mode: info.Mode(), Size: info.Size()})
		}
		return nil
	})
	if err != nil {
		skip(Error, "file-unreadable", ".", "cannot list the skill's files: %v", err)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, problems
}
