package repository_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/repository"
)

// ignoredSkill writes a skill tool below dir with the files a user's
// .gitignore keeps out of git: a .env and node_modules/, whose file has a
// name Windows cannot write (a not-portable problem under strict).
func ignoredSkill(t *testing.T, dir string) string {
	t.Helper()
	return skilltest.Skill(t, dir, "tool", "A tool.", map[string]string{
		"notes.md": "notes\n", ".env": "API_KEY=sk-live-123\n", "node_modules/x/a:b.js": "j\n",
	})
}

// TestGitViewLeavesOutWhatGitIgnores: a skill folder in a git work tree is
// read, listed and validated without what git ignores there, as a sync
// reads a local source, and Ignored names what was left out; the same
// folder outside a work tree is read whole, and validate --strict finds
// the file no sync of the work tree would take.
func TestGitViewLeavesOutWhatGitIgnores(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := t.TempDir()
	env := hostenv.New(home, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"})
	r := gittest.NewRepo(t, "main")
	r.Write(".gitignore", ".env\nnode_modules/\n", 0)
	inTree := ignoredSkill(t, filepath.Join(r.Dir, "skills"))
	outside := ignoredSkill(t, t.TempDir())

	view, err := repository.OpenGitView(inTree, env)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := view.(*repository.IgnoreFS); !ok {
		t.Fatalf("a folder in a work tree is read through %T", view)
	}
	if _, err := view.Stat(".env"); !os.IsNotExist(err) {
		t.Errorf("stat .env: %v, want not found", err)
	}
	names, more, err := repository.Ignored(ctx, view)
	if err != nil || more != 0 || !slices.Equal(names, []string{".env", "node_modules/"}) {
		t.Errorf("Ignored = %q, %d, %v", names, more, err)
	}
	checked, err := repository.ValidateIn(ctx, inTree, true, env)
	if err != nil || len(checked) != 1 || !checked[0].Valid || len(checked[0].Problems) != 0 {
		t.Errorf("validate --strict in the work tree: %+v, %v", checked, err)
	}

	view, err = repository.OpenGitView(outside, env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := view.Stat(".env"); err != nil {
		t.Errorf("a folder outside a work tree, with no .gitignore of its own, is not read whole: %v", err)
	}
	if names, more, err := repository.Ignored(ctx, view); names != nil || more != 0 || err != nil {
		t.Errorf("Ignored outside a work tree = %q, %d, %v", names, more, err)
	}
	checked, err = repository.ValidateIn(ctx, outside, true, env)
	if err != nil || len(checked) != 1 || checked[0].Valid || len(checked[0].Problems) != 1 || checked[0].Problems[0].Rule != "not-portable" {
		t.Errorf("validate --strict outside a work tree: %+v, %v", checked, err)
	}
}

// TestIgnoredIsBounded: Ignored lists MaxIgnoredListed names and counts
// the rest.
func TestIgnoredIsBounded(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	r := gittest.NewRepo(t, "main")
	r.Write(".gitignore", "*.tmp\n", 0)
	r.Write("s/SKILL.md", skilltest.SkillMD("s", "S."), 0)
	n := repository.MaxIgnoredListed + 5
	for i := range n {
		r.Write(filepath.Join("s", "f"+string(rune('a'+i/26))+string(rune('a'+i%26))+".tmp"), "x", 0)
	}
	view, err := repository.OpenGitView(filepath.Join(r.Dir, "s"), hostenv.New(home, []string{"HOME=" + home}))
	if err != nil {
		t.Fatal(err)
	}
	names, more, err := repository.Ignored(context.Background(), view)
	if err != nil || len(names) != repository.MaxIgnoredListed || more != 5 || names[0] != "faa.tmp" {
		t.Errorf("Ignored = %d names (%q...), %d more, %v", len(names), names[:min(len(names), 2)], more, err)
	}
}

// TestGitViewHonoursAFolderOwnGitignore: a skill folder outside any work
// tree, or in a folder git ignores whole (both of which a sync reads
// whole), is still read by validate, propose and publish without what
// its own .gitignore files leave out: a publish puts the folder in a git
// repository, and its .env must not go with it.
func TestGitViewHonoursAFolderOwnGitignore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := t.TempDir()
	env := hostenv.New(home, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"})
	r := gittest.NewRepo(t, "main")
	r.Write(".gitignore", "private/\n", 0)
	for _, dir := range []string{t.TempDir(), filepath.Join(r.Dir, "private")} {
		tool := skilltest.Skill(t, dir, "tool", "A tool.", map[string]string{
			".gitignore": ".env\n/build/\n", ".env": "API_KEY=sk-live-123\n", "build/out.js": "j\n",
			"lib/.gitignore": "*.key\n", "lib/a.key": "k\n", "lib/a.py": "p\n",
		})
		view, err := repository.OpenGitView(tool, env)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{".env", "build/out.js", "lib/a.key"} {
			if _, err := view.Stat(name); !os.IsNotExist(err) {
				t.Errorf("%s: %s served: %v", tool, name, err)
			}
		}
		for _, name := range []string{"SKILL.md", ".gitignore", "lib/a.py"} {
			if _, err := view.Stat(name); err != nil {
				t.Errorf("%s: %s: %v", tool, name, err)
			}
		}
		if names, _, err := repository.Ignored(ctx, view); err != nil || !slices.Equal(names, []string{".env", "build/", "lib/a.key"}) {
			t.Errorf("%s: Ignored = %q, %v", tool, names, err)
		}
	}
}

// TestSkillFilesReadsAsTheLayerSyncs: a layer skill's files are served
// as the sync of its whole layer read them: the .gitignore files between
// the layer's folder and the skill's apply, in a work tree or not, and
// nothing else does; the FS stays confined to the skill (a link into a
// sibling skill is refused).
func TestSkillFilesReadsAsTheLayerSyncs(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := hostenv.New(home, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"})
	for _, c := range []struct {
		name string
		// setup returns the layer's folder, holding skills/tool.
		setup      func(t *testing.T) string
		gone, kept []string
	}{{
		name: "outside a work tree, the layer's rules",
		setup: func(t *testing.T) string {
			layer := t.TempDir()
			skilltest.WriteFile(t, filepath.Join(layer, ".gitignore"), ".env\n/skills/tool/out/\n")
			skilltest.WriteFile(t, filepath.Join(layer, "skills", ".gitignore"), "*.key\n")
			return layer
		},
		gone: []string{".env", "out/a.js", "a.key"},
		kept: []string{"SKILL.md", "notes.md", "lib/out/b.js"},
	}, {
		name: "outside a work tree, the skill's own rules",
		setup: func(t *testing.T) string {
			layer := t.TempDir()
			skilltest.WriteFile(t, filepath.Join(layer, "skills", "tool", ".gitignore"), ".env\nout/\n")
			return layer
		},
		gone: []string{".env", "out/a.js", "lib/out/b.js"},
		kept: []string{"SKILL.md", "notes.md", "a.key"},
	}, {
		name: "in a work tree, git's rules once",
		setup: func(t *testing.T) string {
			r := gittest.NewRepo(t, "main")
			r.Write(".gitignore", "*.key\n", 0)
			r.Write("ws/skills/.gitignore", ".env\n", 0)
			return filepath.Join(r.Dir, "ws")
		},
		gone: []string{".env", "a.key"},
		kept: []string{"SKILL.md", "notes.md", "out/a.js", "lib/out/b.js"},
	}, {
		name: "a skill that is a repository of its own: its rules, not the work tree's",
		setup: func(t *testing.T) string {
			r := gittest.NewRepo(t, "main")
			r.Write(".gitignore", "*.key\n", 0)
			r.Write("ws/skills/tool/.gitignore", ".env\n", 0)
			inner := gittest.NewRepo(t, "main")
			if err := os.Rename(filepath.Join(inner.Dir, ".git"), filepath.Join(r.Dir, "ws", "skills", "tool", ".git")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(r.Dir, "ws")
		},
		gone: []string{".env"},
		kept: []string{"SKILL.md", "notes.md", "a.key", "out/a.js"},
	}, {
		name: "a layer git ignores whole: its own rules, not the work tree's",
		setup: func(t *testing.T) string {
			r := gittest.NewRepo(t, "main")
			r.Write(".gitignore", "ws/\n*.key\n", 0)
			r.Write("ws/.gitignore", ".env\n", 0)
			return filepath.Join(r.Dir, "ws")
		},
		gone: []string{".env"},
		kept: []string{"SKILL.md", "notes.md", "a.key", "out/a.js"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			layer := c.setup(t)
			tool := skilltest.Skill(t, filepath.Join(layer, "skills"), "tool", "A tool.", map[string]string{
				".env": "API_KEY=1\n", "notes.md": "n\n", "out/a.js": "a\n", "lib/out/b.js": "b\n", "a.key": "k\n",
			})
			skilltest.Skill(t, filepath.Join(layer, "skills"), "other", "Another.", map[string]string{"shared.md": "s\n"})
			if err := os.Symlink("../other/shared.md", filepath.Join(tool, "shared.md")); err != nil {
				t.Fatal(err)
			}
			fsys, err := repository.SkillFiles(tool, "skills/tool", true, env)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range c.gone {
				if _, err := fs.Stat(fsys, name); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s: %v, want not found", name, err)
				}
			}
			for _, name := range c.kept {
				if _, err := fs.Stat(fsys, name); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
			if _, err := fs.ReadFile(fsys, "shared.md"); err == nil {
				t.Error("shared.md, a link into a sibling skill, was read")
			}
		})
	}
}

// TestGitIgnoresWholeNamesTheRule: a folder named to be read that git
// ignores as a whole is read, and said to be ignored, naming the folder,
// the rule, its file and line; validate warns of it on every skill
// without failing one, strict or not. A folder git does not ignore (a
// rule taken back, or no work tree) has no such warning.
func TestGitIgnoresWholeNamesTheRule(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := t.TempDir()
	env := hostenv.New(home, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"})
	r := gittest.NewRepo(t, "main")
	r.Write(".gitignore", "# mine\nprivate/\nkept/\n!kept/\n", 0)
	for _, c := range []struct {
		name, dir string
		want      *repository.IgnoredFolder
	}{
		{"the folder itself", "private/tool", &repository.IgnoredFolder{At: filepath.Join(r.Dir, "private"), Rule: "private/", File: filepath.Join(r.Dir, ".gitignore"), Line: 2}},
		{"a rule taken back", "kept/tool", nil},
		{"no work tree", "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			parent := t.TempDir()
			if c.dir != "" {
				parent = filepath.Join(r.Dir, filepath.Dir(c.dir))
			}
			tool := skilltest.Skill(t, parent, "tool", "A tool.", nil)
			view, err := repository.OpenGitView(tool, env)
			if err != nil {
				t.Fatal(err)
			}
			got := repository.GitIgnoresWhole(view)
			if c.want == nil {
				if got != nil {
					t.Fatalf("GitIgnoresWhole = %+v, want nil", got)
				}
				return
			}
			want := *c.want
			want.Dir = view.Dir()
			if got == nil || *got != want {
				t.Fatalf("GitIgnoresWhole = %+v, want %+v", got, want)
			}
			checked, err := repository.ValidateIn(ctx, tool, true, env)
			if err != nil || len(checked) != 1 {
				t.Fatalf("validate: %+v, %v", checked, err)
			}
			if !checked[0].Valid {
				t.Errorf("validate --strict: not valid for the warning alone: %+v", checked[0].Problems)
			}
			ps := checked[0].Problems
			if len(ps) != 1 || ps[0].Rule != "gitignored-folder" || ps[0].File != want.File || ps[0].Line != 2 ||
				!strings.Contains(ps[0].Message, `"private/"`) || !strings.Contains(ps[0].Message, want.At) {
				t.Errorf("validate problems %+v, want one gitignored-folder warning naming the rule and folder", ps)
			}
		})
	}
}

// TestGitViewNestedRepositoryOutsideAWorkTree: a cloned skill (a folder
// holding .git) in a folder outside any work tree is judged as git judges
// that repository: by its own .gitignore files and the user's
// core.excludesFile, while the folder around it still is not judged by
// the user's excludes. Without them, sync and read took the .env git
// keeps out of the clone, which publish and propose of the same skill
// (which find the clone as their work tree) leave out.
func TestGitViewNestedRepositoryOutsideAWorkTree(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[core]\n\texcludesFile = ~/ignores\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "ignores"), []byte(".env\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := hostenv.New(home, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"})
	top := t.TempDir()
	tool := ignoredSkill(t, top)
	if err := os.WriteFile(filepath.Join(top, ".env"), []byte("outer\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "init", "-q", tool)
	cmd.Env = append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}

	view, err := repository.OpenGitView(top, env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := view.Stat("tool/.env"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stat tool/.env through the folder's view: %v, want not found", err)
	}
	for _, f := range []string{".env", "tool/SKILL.md", "tool/notes.md"} {
		if _, err := view.Stat(f); err != nil {
			t.Errorf("stat %s: %v, want served", f, err)
		}
	}
	files, err := repository.SkillFiles(tool, "tool", true, env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Stat(files, ".env"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("read's view of tool/.env: %v, want not found", err)
	}
	own, err := repository.OpenGitView(tool, env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := own.Stat(".env"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("publish's view of tool/.env: %v, want not found", err)
	}
}

// TestValidateSaysASkillFileIsIgnored: a folder whose own .gitignore
// names SKILL.md (outside a work tree, or in one) holds no skill a sync
// takes, and validate says why: the rule, not a missing SKILL.md, which
// the user can see on disk.
func TestValidateSaysASkillFileIsIgnored(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := hostenv.New(home, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"})
	dir := skilltest.Skill(t, t.TempDir(), "tool", "A tool.", map[string]string{".gitignore": "SKILL.md\n"})
	_, err := repository.ValidateIn(context.Background(), dir, false, env)
	if !errors.Is(err, repository.ErrNoSkill) || !strings.Contains(err.Error(), ".gitignore rule leaves out") {
		t.Errorf("validate of a folder whose SKILL.md its .gitignore names: %v", err)
	}
	empty := t.TempDir()
	if _, err := repository.ValidateIn(context.Background(), empty, false, env); !errors.Is(err, repository.ErrNoSkill) || strings.Contains(err.Error(), ".gitignore") {
		t.Errorf("validate of an empty folder: %v", err)
	}
}

// TestOpenGitViewInJudgesAsTheLayer: a skill folder below a layer's
// folder that git does not judge (ignored whole here) is read as the
// layer's sync reads it: without what the layer's .gitignore names, the
// warning saying which rule ignores the folder kept, naming the skill's
// folder; one the layer's own rules leave out whole is read by its own
// rules, as a folder named.
func TestOpenGitViewInJudgesAsTheLayer(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := hostenv.New(home, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"})
	r := gittest.NewRepo(t, "main")
	r.Write(".gitignore", "skills/\n", 0)
	layer := filepath.Join(r.Dir, "skills")
	skilltest.WriteFile(t, filepath.Join(layer, ".gitignore"), "*.env\nhidden/\n")
	mine := skilltest.Skill(t, layer, "mine", "Mine.", map[string]string{"prod.env": "k\n", "notes.md": "n\n"})
	hidden := skilltest.Skill(t, layer, "hidden", "Hidden.", map[string]string{"prod.env": "k\n"})

	view, err := repository.OpenGitViewIn(mine, []string{"", layer}, env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := view.Stat("prod.env"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stat prod.env: %v, want not found", err)
	}
	if _, err := view.Stat("notes.md"); err != nil {
		t.Errorf("stat notes.md: %v", err)
	}
	if w := repository.GitIgnoresWhole(view); w == nil || w.Dir != view.Dir() || w.Rule != "skills/" {
		t.Errorf("GitIgnoresWhole = %+v, want the rule skills/ for %s", w, view.Dir())
	}
	view, err = repository.OpenGitViewIn(hidden, []string{layer}, env)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"SKILL.md", "prod.env"} {
		if _, err := view.Stat(f); err != nil {
			t.Errorf("stat %s in a folder the layer leaves out, named: %v", f, err)
		}
	}
}

// TestValidateUnderReadsAsTheSourceSyncs: a skill below a local source's
// folder is validated as that source's sync reads it: a file the
// .gitignore files above the skill leave out is not checked (a:b.js,
// which fails --strict), in a work tree or outside one; and a skill
// folder they leave out whole is checked with a gitignored-skill warning
// that names the source's folder, the rule, its file and line, and fails
// nothing, strict or not. Judged alone, the skill failed on a file no
// sync takes, and the folder no sync takes was said to be fine.
func TestValidateUnderReadsAsTheSourceSyncs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		// setup returns the source's folder and the .gitignore whose
		// first rule leaves out the skill folder old-pdf, and whose
		// second leaves out the build/ folders.
		setup func(t *testing.T) (src, rules string)
	}{{
		name: "outside a work tree",
		setup: func(t *testing.T) (string, string) {
			src := t.TempDir()
			skilltest.WriteFile(t, filepath.Join(src, ".gitignore"), "old-*/\nbuild/\n")
			return src, filepath.Join(src, ".gitignore")
		},
	}, {
		name: "a .gitignore between the source and the skill in a work tree",
		setup: func(t *testing.T) (string, string) {
			r := gittest.NewRepo(t, "main")
			r.Write("team/skills/.gitignore", "old-*/\nbuild/\n", 0)
			return filepath.Join(r.Dir, "team"), filepath.Join(r.Dir, "team", "skills", ".gitignore")
		},
	}, {
		name: "a .gitignore above the source in a work tree",
		setup: func(t *testing.T) (string, string) {
			r := gittest.NewRepo(t, "main")
			r.Write(".gitignore", "old-*/\nbuild/\n", 0)
			return filepath.Join(r.Dir, "team"), filepath.Join(r.Dir, ".gitignore")
		},
	}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			home := t.TempDir()
			env := hostenv.New(home, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"})
			src, rules := c.setup(t)
			skills := filepath.Join(src, "skills")
			tool := skilltest.Skill(t, skills, "tool", "A tool.", map[string]string{"build/a:b.js": "j\n"})
			old := skilltest.Skill(t, skills, "old-pdf", "Old.", nil)
			tops := []string{"", t.TempDir(), src}

			checked, err := repository.ValidateUnder(ctx, tool, tops, true, env)
			if err != nil || len(checked) != 1 || !checked[0].Valid || len(checked[0].Problems) > 0 {
				t.Errorf("validate --strict of tool: %+v, %v; want valid without problems", checked, err)
			}
			checked, err = repository.ValidateUnder(ctx, old, tops, true, env)
			if err != nil || len(checked) != 1 || !checked[0].Valid || len(checked[0].Problems) != 1 {
				t.Fatalf("validate --strict of old-pdf: %+v, %v; want valid with one warning", checked, err)
			}
			p := checked[0].Problems[0]
			if p.Rule != repository.RuleGitignoredSkill || p.File != rules || p.Line != 1 || !strings.Contains(p.Message, `"old-*/"`) ||
				!strings.Contains(p.Message, "the sync of "+src) || !strings.Contains(p.Message, "no sync takes it") {
				t.Errorf("warning %+v, want gitignored-skill naming the sync of %s and %s:1", p, src, rules)
			}
			// Judged alone (no source holds it), a folder outside a work
			// tree has no rule above it.
			if checked, err := repository.ValidateIn(ctx, tool, true, env); c.name == "outside a work tree" && (err != nil || len(checked) != 1 || checked[0].Valid) {
				t.Errorf("validate --strict of tool alone: %+v, %v; want a:b.js to fail it", checked, err)
			}
		})
	}
}
