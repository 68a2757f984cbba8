package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/skillsync/skillsync/internal/platform"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/skill"
)

type newOptions struct {
	name        string
	dir         string
	description string
}

func newNewCommand(a *app, runF func(context.Context, *newOptions) error) *cobra.Command {
	opts := &newOptions{}
	cmd := &cobra.Command{
		Use:   "new NAME [DIR]",
		Short: "Scaffold a new skill: DIR/NAME/SKILL.md",
		Long: `Write DIR/NAME/SKILL.md (DIR is skills, the workspace layer, unless given)
with the frontmatter the Agent Skills specification requires (name and
description) and the sections it suggests for the body: step-by-step
instructions, examples of inputs and outputs, and edge cases. Fill them in,
then check the skill with skillsync validate --strict. Without --description
the description is a placeholder, which validate warns about
(description-placeholder; an error under --strict) until you replace it.

DIR defaults to the workspace layer (skills/ of the workspace the config
names). NAME must follow the specification: lower-case letters, digits and single
hyphens, at most 64 characters. An existing SKILL.md is never overwritten.`,
		Example: `  skillsync new release-notes
  skillsync new pdf-forms team-skills --description "Fill in PDF forms. Use when the user asks to complete a PDF form."`,
		Args: args(cobra.RangeArgs(1, 2)),
		RunE: func(c *cobra.Command, argv []string) error {
			opts.name = argv[0]
			if len(argv) == 2 {
				opts.dir = argv[1]
			}
			return pick(runF, a.runNew)(c.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.description, "description", "", "what the skill does and when to use it (default: a placeholder to replace)")
	return cmd
}

// skillTemplate is the body of a new SKILL.md, after its frontmatter. Its
// sections are the ones the Agent Skills specification recommends
// (agentskills.io/specification, "Body content").
const skillTemplate = `
# %s

Say in a sentence or two what this skill is for. The description above is
all an agent reads before it decides to load the skill: say there what the
skill does and when to use it, with the words a user would say.

## Instructions

1. The first step, as an instruction to the agent.
2. The next step. Name the commands, files and checks to use.
3. How to tell the work is done.

## Examples

Input: what a user might ask for.

Output: what the agent should produce for it.

## Edge cases

- A situation where the steps above do not apply, and what to do instead.

Keep this file under 500 lines. Put long reference material in references/,
scripts in scripts/ and templates in assets/, and name them here where they
are needed: an agent reads them only then.
`

type newJSON struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

func (a *app) runNew(ctx context.Context, opts *newOptions) error {
	desc := strings.TrimSpace(opts.description)
	if desc == "" {
		desc = skill.PlaceholderDescription
	}
	content, err := scaffold(opts.name, desc)
	if err != nil {
		return err
	}
	given := opts.dir // as typed: the messages keep a relative DIR relative
	layer := opts.dir == ""
	if opts.dir, err = a.abs(opts.dir); err != nil {
		return err
	}
	if opts.dir == "" {
		// The workspace layer of the workspace the config names, wherever
		// the command runs.
		cfg, err := a.findConfig(true)
		if err != nil {
			return err
		}
		opts.dir = cfg.Layout().SkillsDir()
		given = opts.dir
	}
	if err := os.MkdirAll(opts.dir, 0o755); err != nil {
		return fmt.Errorf("new skill %s: %w", opts.name, err)
	}
	dir := filepath.Join(opts.dir, opts.name)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("new skill %s: %w", opts.name, err)
	}
	if info, err := os.Lstat(dir); err != nil || !info.IsDir() {
		return fmt.Errorf("new skill %s: %s is not a directory", opts.name, dir)
	}
	file := filepath.Join(dir, "SKILL.md")
	f, err := platform.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s already exists; it is left as it is", file)
	}
	if err != nil {
		return fmt.Errorf("new skill %s: %w", opts.name, err)
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", file, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	if a.json {
		return writeJSON(a.stdout, newJSON{Name: opts.name, Path: a.shown(given, file)})
	}
	fmt.Fprintf(a.stdout, "wrote %s\n", a.shown(given, file))
	if opts.description == "" {
		fmt.Fprintln(a.stdout, "replace its description and fill in its sections, then: skillsync validate --strict "+a.shown(given, dir))
	}
	if layer {
		a.warnShadowed(ctx, opts.name)
	}
	return nil
}

// warnShadowed warns when the new skill of the workspace layer takes the
// name of a skill a source brings: from the next sync on, the agents get
// the new one in its place, placeholder and all.
func (a *app) warnShadowed(ctx context.Context, name string) {
	eng, err := a.engine()
	if err != nil {
		return
	}
	cat, err := eng.Catalog(ctx)
	if err != nil {
		return
	}
	w, ok := cat.Lookup(name)
	if !ok || w.Layer != layering.Workspace {
		return
	}
	for _, e := range w.Shadowed {
		if e.Layer != layering.Workspace {
			a.warn("%s of %s (%s) is shadowed by the new skill from the next sync on: the workspace layer wins; to keep the %s one, remove %s or pick another name", name, e.Source, e.Layer, e.Source, entryPath(&w.Entry))
			return
		}
	}
}

// scaffold returns the SKILL.md of a new skill, refusing a name or a
// description that the Agent Skills rules would warn about: what new
// writes passes validate --strict, but for the placeholder description
// written when none is given, which validation warns about until it is
// replaced (description-placeholder).
func scaffold(name, description string) (string, error) {
	if !skill.ValidName(name) {
		return "", usageError("%q cannot be a skill name: use lower-case letters, digits and hyphens", name)
	}
	fm, err := frontmatterText(name, description)
	if err != nil {
		return "", err
	}
	content := fm + fmt.Sprintf(skillTemplate, name)
	_, problems := skill.Parse([]byte(content), name)
	problems = slices.DeleteFunc(problems, func(p skill.Problem) bool { return p.Rule == "description-placeholder" })
	if len(problems) > 0 {
		var msgs []string
		for _, p := range problems {
			msgs = append(msgs, p.Message)
		}
		return "", usageError("%s", strings.Join(msgs, "; "))
	}
	return content, nil
}

// frontmatterText renders the frontmatter, quoting values where YAML
// needs it.
func frontmatterText(name, description string) (string, error) {
	var b strings.Builder
	b.WriteString("---\n")
	for _, kv := range [][2]string{{"name", name}, {"description", description}} {
		v, err := yamlScalar(kv[1])
		if err != nil {
			return "", usageError("--%s: %w", kv[0], err)
		}
		b.WriteString(kv[0] + ": " + v + "\n")
	}
	b.WriteString("---\n")
	return b.String(), nil
}

// yamlScalar renders s as a one-line YAML scalar that reads back as s.
func yamlScalar(s string) (string, error) {
	if strings.ContainsAny(s, "\n\r") {
		return "", errors.New("must be one line")
	}
	out, err := yaml.Marshal(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s})
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(out), "\n"), nil
}
