package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

type validateOptions struct {
	paths  []string
	strict bool
}

func (a *app) validateCommand() *cobra.Command {
	var opts validateOptions
	cmd := &cobra.Command{
		Use:   "validate PATH...",
		Short: "Check skills against the Agent Skills rules",
		Long: `Check skills against the Agent Skills rules.

PATH is a skill directory, a SKILL.md, or a directory of skills (searched
four levels deep). Each problem is printed as FILE:LINE: LEVEL: MESSAGE (RULE).
Errors make a skill unusable; warnings are kept unless --strict is given.

Exit status is 0 when no skill has an error (with --strict, no warning
either), else 1.`,
		Example: `  skillsync validate skills/
  skillsync validate --strict skills/release-notes/SKILL.md
  skillsync validate --json skills/ | jq '.[] | select(.valid | not)'`,
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(c *cobra.Command, paths []string) error {
			opts.paths = paths
			return a.runValidate(c.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.strict, "strict", false, "treat warnings as errors")
	return cmd
}

// validateResult is one skill in validate's JSON.
type validateResult struct {
	Path     string            `json:"path"`
	Name     string            `json:"name"`
	Valid    bool              `json:"valid"`
	Problems []validateProblem `json:"problems"`
}

type validateProblem struct {
	Level   skill.Level `json:"level"`
	Rule    string      `json:"rule"`
	Message string      `json:"message"`
	File    string      `json:"file"`
	Line    int         `json:"line,omitempty"`
}

func (a *app) runValidate(ctx context.Context, opts validateOptions) error {
	var results []validateResult
	for _, p := range opts.paths {
		rs, err := validatePath(ctx, p, opts.strict)
		if err != nil {
			return &exitError{code: exitFailure, err: err}
		}
		results = append(results, rs...)
	}
	failed := 0
	for _, r := range results {
		if !r.Valid {
			failed++
		}
	}
	if a.json {
		if err := writeJSON(a.stdout, orEmpty(results)); err != nil {
			return err
		}
	} else {
		for _, r := range results {
			for _, p := range r.Problems {
				loc := p.File
				if p.Line > 0 {
					loc = fmt.Sprintf("%s:%d", loc, p.Line)
				}
				fmt.Fprintf(a.stdout, "%s: %s: %s (%s)\n", loc, p.Level, p.Message, p.Rule)
			}
		}
		fmt.Fprintf(a.stderr, "%s checked, %d not valid\n", plural(len(results), "skill"), failed)
	}
	if failed > 0 {
		return &exitError{code: exitFailure}
	}
	return nil
}

// validatePath checks every skill at or below path.
func validatePath(ctx context.Context, path string, strict bool) ([]validateResult, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("validate %s: %w", path, err)
	}
	dir := path
	if !info.IsDir() {
		if base := filepath.Base(path); base != "SKILL.md" && base != "skill.md" {
			return nil, fmt.Errorf("validate %s: not a directory or a SKILL.md", path)
		}
		dir = filepath.Dir(path)
	}
	fsys, err := repository.NewDirFS(dir)
	if err != nil {
		return nil, fmt.Errorf("validate %s: %w", path, err)
	}
	found, loose, err := repository.Scan(ctx, fsys, "", filepath.Base(fsys.Dir()), repository.Options{})
	if err != nil {
		return nil, fmt.Errorf("validate %s: %w", path, err)
	}
	var out []validateResult
	for _, f := range found {
		out = append(out, validateResult{
			Path:     filepath.Join(dir, filepath.FromSlash(f.Skill.Path)),
			Name:     f.Skill.Name,
			Valid:    !skill.HasError(f.Problems, strict),
			Problems: validateProblems(dir, f.Problems),
		})
	}
	for _, p := range loose {
		out = append(out, validateResult{
			Path:     filepath.Join(dir, filepath.FromSlash(p.Path)),
			Valid:    !skill.HasError([]skill.Problem{p}, strict),
			Problems: validateProblems(dir, []skill.Problem{p}),
		})
	}
	return out, nil
}

func validateProblems(dir string, problems []skill.Problem) []validateProblem {
	out := make([]validateProblem, 0, len(problems))
	for _, p := range problems {
		out = append(out, validateProblem{
			Level: p.Level, Rule: p.Rule, Message: p.Message, Line: p.Line,
			File: filepath.Join(dir, filepath.FromSlash(p.File)),
		})
	}
	return out
}
