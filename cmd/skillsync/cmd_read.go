package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync/repository"
)

func (a *app) readCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "read NAME [FILE]",
		Short: "Print a skill's SKILL.md, or one of its files",
		Long: `Print a skill's SKILL.md, or FILE of the skill.

FILE is relative to the skill's directory and must stay inside it: "..",
absolute paths and symbolic links that lead out of the skill are refused.`,
		Example: `  skillsync read pdf
  skillsync read pdf scripts/extract.py`,
		Args: args(cobra.RangeArgs(1, 2)),
		RunE: func(c *cobra.Command, argv []string) error {
			file := ""
			if len(argv) == 2 {
				file = argv[1]
			}
			return a.runRead(c.Context(), argv[0], file)
		},
	}
}

func (a *app) runRead(ctx context.Context, name, file string) error {
	_, cat, err := a.catalog(ctx)
	if err != nil {
		return err
	}
	w, err := lookup(cat, name)
	if err != nil {
		return err
	}
	if file == "" {
		file = w.Skill.File
	}
	rel, err := skillRelative(file)
	if err != nil {
		return &exitError{code: exitFailure, err: fmt.Errorf("read %s %s: %w", w.Skill.Name, file, err)}
	}
	fsys := w.Skill.Files
	if w.Dir != "" {
		// Confine to the skill itself: a source-wide link into another
		// skill is fine for discovery, but read promises this skill's files.
		dfs, err := repository.NewDirFS(w.Dir)
		if err != nil {
			return fmt.Errorf("read %s: %w", w.Skill.Name, err)
		}
		fsys = dfs
	}
	f, err := fsys.Open(rel)
	if err != nil {
		return &exitError{code: exitFailure, err: readError(w.Skill.Name, file, err)}
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return readError(w.Skill.Name, file, err)
	}
	if info.IsDir() {
		return &exitError{code: exitFailure, err: fmt.Errorf("read %s %s: is a directory; skillsync show %s lists the files", w.Skill.Name, file, w.Skill.Name)}
	}
	_, err = io.Copy(a.stdout, f)
	return err
}

// skillRelative checks that file names a path inside a skill and returns
// it in io/fs form.
func skillRelative(file string) (string, error) {
	slashed := strings.ReplaceAll(file, "\\", "/")
	if path.IsAbs(slashed) || (len(file) > 1 && file[1] == ':') {
		return "", errors.New("absolute paths are refused: give a path relative to the skill")
	}
	clean := path.Clean(slashed)
	if clean == ".." || strings.HasPrefix(clean, "../") || !fs.ValidPath(clean) {
		return "", errors.New("the path leads out of the skill and is refused")
	}
	return clean, nil
}

func readError(name, file string, err error) error {
	switch {
	case errors.Is(err, repository.ErrOutside):
		return fmt.Errorf("read %s %s: a symbolic link leads out of the skill; refused", name, file)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("read %s %s: no such file in the skill; skillsync show %s lists the files", name, file, name)
	}
	return fmt.Errorf("read %s %s: %w", name, file, err)
}
