package dir_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/repository/dir"
	"github.com/skillsync/skillsync/skill"
)

// ignoreEnv is an environment whose user has no git config of their own
// but home's, and no system one: the machine running the tests must not
// decide what is ignored.
func ignoreEnv(home string) hostenv.Env {
	return hostenv.New(home, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"})
}

// listing is every file of every skill the source yields, as
// "skill/path", and the problems' rules and paths as "rule path".
func listing(t *testing.T, r repository.Repository) (files, problems []string) {
	t.Helper()
	skills, ps, err := r.Skills(context.Background())
	if err != nil {
		t.Fatalf("Skills: %v", err)
	}
	for _, s := range skills {
		for _, f := range s.Listing {
			files = append(files, s.Name+"/"+f.Path)
		}
	}
	for _, p := range ps {
		problems = append(problems, p.Rule+" "+p.Path)
		if strings.Count(p.Message, "readdir ") > 1 {
			t.Errorf("problem %s %s says readdir twice: %s", p.Rule, p.Path, p.Message)
		}
	}
	return files, problems
}

// TestDirSourceLeavesOutWhatGitIgnores: a dir source in a git work tree
// is read as git status sees it. Without the rules every file of the
// work tree was read, .env and node_modules included.
func TestDirSourceLeavesOutWhatGitIgnores(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		// setup writes into the work tree at root (a git repository with
		// the skills tool and other committed) and the user's home; it
		// returns the folder the source reads.
		setup    func(t *testing.T, root *gittest.Repo, home string) string
		want     []string // files listed
		problems []string // "rule path" of the problems, in part
	}{{
		name: "ignored file and folder",
		setup: func(t *testing.T, r *gittest.Repo, home string) string {
			r.Write(".gitignore", ".env\nnode_modules/\n", 0)
			r.Write("skills/tool/.env", "API_KEY=sk-live-123\n", 0)
			r.Write("skills/tool/node_modules/x/i.js", "j\n", 0)
			// Work in progress is read: a tracked file edited, a new one
			// not yet added.
			r.Write("skills/tool/scripts/run.sh", "echo edited\n", 0)
			r.Write("skills/tool/new.md", "draft\n", 0)
			return r.Dir
		},
		want: []string{"other/SKILL.md", "tool/SKILL.md", "tool/new.md", "tool/scripts/run.sh"},
	}, {
		name: "nested .gitignore",
		setup: func(t *testing.T, r *gittest.Repo, home string) string {
			r.Write("skills/tool/.gitignore", "secret.txt\nout/\n", 0)
			r.Write("skills/tool/secret.txt", "s\n", 0)
			r.Write("skills/tool/out/a.bin", "a\n", 0)
			r.Write("skills/other/secret.txt", "not ignored here\n", 0)
			return r.Dir
		},
		want: []string{"other/SKILL.md", "other/secret.txt", "tool/.gitignore", "tool/SKILL.md", "tool/scripts/run.sh"},
	}, {
		name: "negation",
		setup: func(t *testing.T, r *gittest.Repo, home string) string {
			r.Write(".gitignore", "*.txt\n!keep.txt\n", 0)
			r.Write("skills/tool/keep.txt", "k\n", 0)
			r.Write("skills/tool/drop.txt", "d\n", 0)
			return r.Dir
		},
		want: []string{"other/SKILL.md", "tool/SKILL.md", "tool/keep.txt", "tool/scripts/run.sh"},
	}, {
		// go-git's Matcher lets "!config/" match config/.env through its
		// folder and keeps it; git ignores it.
		name: "negated folder does not take back its files",
		setup: func(t *testing.T, r *gittest.Repo, home string) string {
			r.Write(".gitignore", ".env\n!config/\n", 0)
			r.Write("skills/tool/config/.env", "k\n", 0)
			r.Write("skills/tool/config/a.yaml", "a\n", 0)
			return r.Dir
		},
		want: []string{"other/SKILL.md", "tool/SKILL.md", "tool/config/a.yaml", "tool/scripts/run.sh"},
	}, {
		name: "a file inside an ignored folder cannot be taken back",
		setup: func(t *testing.T, r *gittest.Repo, home string) string {
			r.Write(".gitignore", "build/\n!keep.txt\n", 0)
			r.Write("skills/tool/build/keep.txt", "k\n", 0)
			return r.Dir
		},
		want: []string{"other/SKILL.md", "tool/SKILL.md", "tool/scripts/run.sh"},
	}, {
		name: "anchored and double-star rules",
		setup: func(t *testing.T, r *gittest.Repo, home string) string {
			r.Write(".gitignore", "/skills/tool/scripts/gen-*\n**/cache/**\n", 0)
			r.Write("skills/tool/scripts/gen-1.sh", "g\n", 0)
			r.Write("skills/tool/cache/a/b", "c\n", 0)
			r.Write("skills/other/scripts/gen-1.sh", "kept: the rule is anchored elsewhere\n", 0)
			return r.Dir
		},
		want: []string{"other/SKILL.md", "other/scripts/gen-1.sh", "tool/SKILL.md", "tool/scripts/run.sh"},
	}, {
		name: "info/exclude",
		setup: func(t *testing.T, r *gittest.Repo, home string) string {
			skilltest.WriteFile(t, filepath.Join(r.Dir, ".git", "info", "exclude"), "local.md\n")
			r.Write("skills/tool/local.md", "mine\n", 0)
			return r.Dir
		},
		want: []string{"other/SKILL.md", "tool/SKILL.md", "tool/scripts/run.sh"},
	}, {
		// A skill cloned into the source is a repository of its own,
		// which git judges by its own info/exclude: publish of the skill
		// (which finds the clone as its work tree) left local.md out,
		// and the sync took it to the agents' folders.
		name: "a cloned skill's info/exclude",
		setup: func(t *testing.T, r *gittest.Repo, home string) string {
			clone := gittest.NewRepoIn(t, filepath.Join(r.Dir, "skills", "cloned"), "main")
			clone.Write("SKILL.md", skilltest.SkillMD("cloned", "A cloned skill."), 0)
			clone.Write("local.md", "mine\n", 0)
			skilltest.WriteFile(t, filepath.Join(clone.Dir, ".git", "info", "exclude"), "local.md\n")
			return r.Dir
		},
		want: []string{"cloned/SKILL.md", "other/SKILL.md", "tool/SKILL.md", "tool/scripts/run.sh"},
	}, {
		name: "a cloned skill's own core.excludesFile",
		setup: func(t *testing.T, r *gittest.Repo, home string) string {
			clone := gittest.NewRepoIn(t, filepath.Join(r.Dir, "skills", "cloned"), "main")
			clone.Write("SKILL.md", skilltest.SkillMD("cloned", "A cloned skill."), 0)
			clone.Write("notes.tmp", "scratch\n", 0)
			rules := filepath.Join(home, "clone-ignores")
			skilltest.WriteFile(t, rules, "*.tmp\n")
			clone.Git("config", "core.excludesFile", rules)
			return r.Dir
		},
		want: []string{"cloned/SKILL.md", "other/SKILL.md", "tool/SKILL.md", "tool/scripts/run.sh"},
	}, {
		// The user's config is read once for the clones of a listing,
		// but an includeIf gitdir: in it is judged for each.
		name: "the user's includeIf gitdir: judged for each cloned skill",
		setup: func(t *testing.T, r *gittest.Repo, home string) string {
			skilltest.WriteFile(t, filepath.Join(home, ".gitconfig"), "[includeIf \"gitdir:**/clone-a/\"]\n\tpath = a.inc\n")
			skilltest.WriteFile(t, filepath.Join(home, "a.inc"), "[core]\n\texcludesFile = ~/a-ignores\n")
			skilltest.WriteFile(t, filepath.Join(home, "a-ignores"), "*.tmp\n")
			for _, name := range []string{"clone-a", "clone-b"} {
				clone := gittest.NewRepoIn(t, filepath.Join(r.Dir, "skills", name), "main")
				clone.Write("SKILL.md", skilltest.SkillMD(name, "A cloned skill."), 0)
				clone.Write("notes.tmp", "scratch\n", 0)
			}
			return r.Dir
		},
		want: []string{"clone-a/SKILL.md", "clone-b/SKILL.md", "clone-b/notes.tmp", "other/SKILL.md", "tool/SKILL.md", "tool/scripts/run.sh"},
	}, {
		name: "a cloned skill's info/exclude outside any work tree",
		setup: func(t *testing.T, r *gittest.Repo, home string) string {
			out := t.TempDir()
			clone := gittest.NewRepoIn(t, filepath.Join(out, "skills", "cloned"), "main")
			clone.Write("SKILL.md", skilltest.SkillMD("cloned", "A cloned skill."), 0)
			clone.Write("local.md", "mine\n", 0)
			skilltest.WriteFile(t, filepath.Join(clone.Dir, ".git", "info", "exclude"), "local.md\n")
			return out
		},
		want: []string{"cloned/SKILL.md"},
	}, {
		name: "the user's core.excludesFile",
		setup: func(t *testing.T, r *gittest.Repo, home string) string {
			skilltest.WriteFile(t, filepath.Join(home, ".gitconfig"), "[core]\n\texcludesFile = ~/my-ignores\n")
			skilltest.WriteFile(t, filepath.Join(home, "my-ignores"), "*.swp\n")
			r.Write("skills/tool/SKILL.md.swp", "x\n", 0)
			return r.Dir
		},
		want: []string{"other/SKILL.md", "tool/SKILL.md", "tool/scripts/run.sh"},
	}, {
		name: "the user's default global ignore",
		setup: func(t *testing.T, r *gittest.Repo, home string) string {
			skilltest.WriteFile(t, filepath.Join(home, ".config", "git", "ignore"), ".DS_Store\n")
			r.Write("skills/tool/.DS_Store", "x\n", 0)
			return r.Dir
		},
		want: []string{"other/SKILL.md", "tool/SKILL.md", "tool/scripts/run.sh"},
	}, {
		name: "a .gitignore above the source",
		setup: func(t *testing.T, r *gittest.Repo, home string) string {
			r.Write(".gitignore", "*.log\n", 0)
			r.Write("skills/tool/debug.log", "x\n", 0)
			return filepath.Join(r.Dir, "skills")
		},
		want: []string{"other/SKILL.md", "tool/SKILL.md", "tool/scripts/run.sh"},
	}, {
		// The user named the folder: git ignoring it as a whole does not
		// empty the source.
		name: "a source folder git ignores is read whole",
		setup: func(t *testing.T, r *gittest.Repo, home string) string {
			r.Write(".gitignore", "skills/\n*.log\n", 0)
			r.Write("skills/tool/debug.log", "x\n", 0)
			return filepath.Join(r.Dir, "skills")
		},
		want:     []string{"other/SKILL.md", "tool/SKILL.md", "tool/debug.log", "tool/scripts/run.sh"},
		problems: []string{"gitignored-folder "},
	}, {
		// Its own .gitignore files say what its author keeps out of git,
		// as publish reads them: a sync read it whole, and the .env went
		// into the agents' folders that publish kept it out of.
		name: "a folder outside any work tree keeps its own .gitignore",
		setup: func(t *testing.T, r *gittest.Repo, home string) string {
			out := t.TempDir()
			skilltest.Skill(t, filepath.Join(out, "skills"), "tool", "A tool.", map[string]string{
				".env": "API_KEY=1\n", "node_modules/x/i.js": "j\n", ".gitignore": ".env\nnode_modules/\n",
			})
			skilltest.Skill(t, filepath.Join(out, "skills"), "other", "Another.", map[string]string{
				".env": "kept: no rule of its folder names it\n",
			})
			return out
		},
		want: []string{"other/.env", "other/SKILL.md", "tool/.gitignore", "tool/SKILL.md"},
	}, {
		name: "a .gitignore at the root of a source outside any work tree",
		setup: func(t *testing.T, r *gittest.Repo, home string) string {
			out := t.TempDir()
			skilltest.WriteFile(t, filepath.Join(out, ".gitignore"), "*.log\n/skills/tool/build/\n")
			skilltest.Skill(t, filepath.Join(out, "skills"), "tool", "A tool.", map[string]string{
				"debug.log": "x\n", "build/a.js": "j\n", "lib/build/b.js": "kept: the rule is anchored\n",
			})
			return out
		},
		want: []string{"tool/SKILL.md", "tool/lib/build/b.js"},
	}, {
		// Read whole as to the work tree's rules (*.log), but not as to
		// the folder's own.
		name: "a source folder git ignores keeps its own .gitignore",
		setup: func(t *testing.T, r *gittest.Repo, home string) string {
			r.Write(".gitignore", "skills/\n*.log\n", 0)
			r.Write("skills/tool/debug.log", "x\n", 0)
			r.Write("skills/tool/.gitignore", ".env\n", 0)
			r.Write("skills/tool/.env", "API_KEY=1\n", 0)
			return filepath.Join(r.Dir, "skills")
		},
		want:     []string{"other/SKILL.md", "tool/.gitignore", "tool/SKILL.md", "tool/debug.log", "tool/scripts/run.sh"},
		problems: []string{"gitignored-folder "},
	}, {
		name: "a linked .gitignore outside any work tree is not followed",
		setup: func(t *testing.T, r *gittest.Repo, home string) string {
			out := t.TempDir()
			tool := skilltest.Skill(t, filepath.Join(out, "skills"), "tool", "A tool.", nil)
			rules := filepath.Join(t.TempDir(), "rules")
			skilltest.WriteFile(t, rules, "*.md\n")
			if err := os.Symlink(rules, filepath.Join(tool, ".gitignore")); err != nil {
				t.Skip(err)
			}
			return out
		},
		want:     []string{"tool/SKILL.md"},
		problems: []string{"gitignore-unread skills/tool/.gitignore"},
	}, {
		name: "an oversize .gitignore outside any work tree closes its folder",
		setup: func(t *testing.T, r *gittest.Repo, home string) string {
			out := t.TempDir()
			skilltest.Skill(t, filepath.Join(out, "skills"), "tool", "A tool.", map[string]string{
				".gitignore": strings.Repeat("x\n", repository.MaxIgnoreFileSize/2+1),
			})
			skilltest.Skill(t, filepath.Join(out, "skills"), "other", "Another.", nil)
			return out
		},
		want:     []string{"other/SKILL.md"},
		problems: []string{"dir-unreadable skills/tool"},
	}, {
		// In a work tree the folder's own rules are among git's, read
		// once: read a second time, as a folder outside a work tree
		// reads them, these would count twice and close the folder.
		name: "a folder's own rules in a work tree count once",
		setup: func(t *testing.T, r *gittest.Repo, home string) string {
			r.Write("skills/tool/.gitignore", ".env\n"+strings.Repeat("b\n", repository.MaxIgnoreRules/2+1), 0)
			r.Write("skills/tool/.env", "API_KEY=1\n", 0)
			return filepath.Join(r.Dir, "skills")
		},
		want: []string{"other/SKILL.md", "tool/.gitignore", "tool/SKILL.md", "tool/scripts/run.sh"},
	}, {
		// Knowing that git keeps it would take the index.
		name: "a tracked file a rule matches is left out",
		setup: func(t *testing.T, r *gittest.Repo, home string) string {
			r.Write(".gitignore", "*.sh\n", 0)
			return r.Dir
		},
		want: []string{"other/SKILL.md", "tool/SKILL.md"},
	}, {
		name: "an oversize .gitignore closes its folder",
		setup: func(t *testing.T, r *gittest.Repo, home string) string {
			r.Write("skills/tool/.gitignore", strings.Repeat("x\n", repository.MaxIgnoreFileSize/2+1), 0)
			return r.Dir
		},
		want:     []string{"other/SKILL.md"},
		problems: []string{"dir-unreadable skills/tool"},
	}, {
		name: "too many rules close the folder",
		setup: func(t *testing.T, r *gittest.Repo, home string) string {
			r.Write(".gitignore", strings.Repeat("a\n", repository.MaxIgnoreRules/2), 0)
			r.Write("skills/tool/.gitignore", strings.Repeat("b\n", repository.MaxIgnoreRules/2+1), 0)
			return r.Dir
		},
		want:     []string{"other/SKILL.md"},
		problems: []string{"dir-unreadable skills/tool"},
	}, {
		// git does not follow a .gitignore that is a link; nor does the
		// source, out of it: the rules there would hide SKILL.md.
		name: "a linked .gitignore is not followed",
		setup: func(t *testing.T, r *gittest.Repo, home string) string {
			outside := filepath.Join(t.TempDir(), "rules")
			skilltest.WriteFile(t, outside, "*.md\n")
			r.Symlink(outside, "skills/tool/.gitignore")
			return r.Dir
		},
		want:     []string{"other/SKILL.md", "tool/SKILL.md", "tool/scripts/run.sh"},
		problems: []string{"gitignore-unread skills/tool/.gitignore"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			r := gittest.NewRepo(t, "main")
			r.Skill("skills/tool", "A tool.")
			r.Write("skills/tool/scripts/run.sh", "echo hi\n", 0o755)
			r.Skill("skills/other", "Another.")
			r.Commit("skills")
			src := c.setup(t, r, home)
			files, problems := listing(t, dir.NewSource("team", src, repository.Options{Env: ignoreEnv(home)}))
			if !slices.Equal(files, c.want) {
				t.Errorf("files %q, want %q (problems %q)", files, c.want, problems)
			}
			for _, p := range c.problems {
				if !slices.ContainsFunc(problems, func(got string) bool { return strings.HasPrefix(got, p) }) {
					t.Errorf("problems %q, want %q among them", problems, p)
				}
			}
			if c.problems == nil && len(problems) > 0 {
				t.Errorf("problems %q, want none", problems)
			}
		})
	}
}

// TestDirSourceOversizeRootIgnoreNamesIt: a .gitignore at the source's
// root that is too big fails the source, naming the file, rather than
// reading what it may keep out.
func TestDirSourceOversizeRootIgnoreNamesIt(t *testing.T) {
	t.Parallel()
	r := gittest.NewRepo(t, "main")
	r.Skill("skills/tool", "A tool.")
	r.Write(".gitignore", strings.Repeat("x\n", repository.MaxIgnoreFileSize/2+1), 0)
	src := dir.NewSource("team", r.Dir, repository.Options{Env: ignoreEnv(t.TempDir())})
	_, _, err := src.Skills(context.Background())
	if err == nil || !strings.Contains(err.Error(), ".gitignore") || !strings.Contains(err.Error(), "bytes") {
		t.Fatalf("Skills: %v, want an error naming .gitignore and its size", err)
	}
	if _, err := src.Sync(context.Background()); err == nil || !strings.Contains(err.Error(), ".gitignore") {
		t.Fatalf("Sync: %v, want an error naming .gitignore", err)
	}
}

// TestDirSourceRevisionFollowsIgnoreRules: a rule added between two
// listings, in a .gitignore or in info/exclude (which is no file of the
// source), changes the revision and takes the file out of the next
// listing, so the cache does not keep it.
func TestDirSourceRevisionFollowsIgnoreRules(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		edit func(t *testing.T, r *gittest.Repo)
	}{
		{".gitignore", func(t *testing.T, r *gittest.Repo) { r.Write("skills/tool/.gitignore", "notes.md\n", 0) }},
		{"info/exclude", func(t *testing.T, r *gittest.Repo) {
			skilltest.WriteFile(t, filepath.Join(r.Dir, ".git", "info", "exclude"), "notes.md\n")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := gittest.NewRepo(t, "main")
			r.Skill("skills/tool", "A tool.")
			r.Write("skills/tool/notes.md", "n\n", 0)
			r.Commit("skills")
			if err := os.MkdirAll(filepath.Join(r.Dir, ".git", "info"), 0o755); err != nil {
				t.Fatal(err)
			}
			src := dir.NewSource("team", r.Dir, repository.Options{Env: ignoreEnv(t.TempDir())})
			before, err := src.Sync(ctx)
			if err != nil {
				t.Fatal(err)
			}
			c.edit(t, r)
			after, err := src.Sync(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if before == after {
				t.Errorf("the revision %s did not change with the rule", before)
			}
			files, _ := listing(t, src)
			if slices.Contains(files, "tool/notes.md") {
				t.Errorf("files %q still hold the ignored notes.md", files)
			}
		})
	}
}

// TestDirSourceInAFolderGitIgnoresWarns: a dir: source whose folder git
// ignores as a whole is read, with a warning naming the folder and the
// rule's file, rather than read silently; a layer's folder git ignores
// (the user's own skills, kept out of the team's repository on purpose)
// is read without one.
func TestDirSourceInAFolderGitIgnoresWarns(t *testing.T) {
	t.Parallel()
	r := gittest.NewRepo(t, "main")
	r.Write(".gitignore", "vendor/\n", 0)
	r.Skill("vendor/skills/tool", "A tool.")
	src := filepath.Join(r.Dir, "vendor", "skills")
	env := repository.Options{Env: ignoreEnv(t.TempDir())}
	_, ps, err := dir.NewSource("team", src, env).Skills(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].Rule != "gitignored-folder" || ps[0].Source != "team" || ps[0].File != filepath.Join(r.Dir, ".gitignore") ||
		!strings.Contains(ps[0].Message, "vendor/") {
		t.Errorf("problems %+v, want one gitignored-folder warning of source team naming .gitignore and vendor/", ps)
	}
	files, problems := listing(t, dir.NewLocal("workspace", src, env))
	if !slices.Equal(files, []string{"tool/SKILL.md"}) || len(problems) > 0 {
		t.Errorf("layer: files %q, problems %q; want tool/SKILL.md and none", files, problems)
	}
}

// TestDirSourceWarnsOfSkillFoldersGitIgnores: a skill folder of a dir:
// source that a .gitignore rule leaves out (the source's own, one
// between its root and the skill, or one above the source in its work
// tree) is not synced, and the source says which folder and which rule,
// in which file, rather than drop it in silence. A folder left out that
// holds no skill, or lies inside a skill, is no news; nor is a layer's.
func TestDirSourceWarnsOfSkillFoldersGitIgnores(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		// setup returns the source's folder and the .gitignore whose rule
		// leaves the skills out.
		setup func(t *testing.T) (src, rules string)
		want  []string // "path line" of the warnings, the path in the source
		files []string // the skills synced
	}{{
		name: "the source's own .gitignore outside a work tree",
		setup: func(t *testing.T) (string, string) {
			src := t.TempDir()
			skilltest.WriteFile(t, filepath.Join(src, ".gitignore"), "# drafts\ndrafts/\nnode_modules/\nbuild/\n")
			skilltest.Skill(t, src, "tool", "A tool.", map[string]string{"build/out.md": "o\n"})
			skilltest.Skill(t, filepath.Join(src, "drafts"), "wip", "Work in progress.", nil)
			skilltest.Skill(t, filepath.Join(src, "drafts"), "next", "Next.", nil)
			skilltest.Skill(t, filepath.Join(src, "node_modules"), "pkg", "A package's.", nil)
			skilltest.WriteFile(t, filepath.Join(src, "build", "a.txt"), "no skill\n")
			return src, filepath.Join(src, ".gitignore")
		},
		want:  []string{"drafts/next 2", "drafts/wip 2"},
		files: []string{"tool/SKILL.md"},
	}, {
		name: "a .gitignore between the source's root and the skill",
		setup: func(t *testing.T) (string, string) {
			r := gittest.NewRepo(t, "main")
			r.Skill("skills/tool", "A tool.")
			r.Skill("skills/legacy-pdf", "Old.")
			r.Write("skills/.gitignore", "legacy-*/\n", 0)
			return r.Dir, filepath.Join(r.Dir, "skills", ".gitignore")
		},
		want:  []string{"skills/legacy-pdf 1"},
		files: []string{"tool/SKILL.md"},
	}, {
		name: "a .gitignore above the source in its work tree",
		setup: func(t *testing.T) (string, string) {
			r := gittest.NewRepo(t, "main")
			r.Write(".gitignore", "*.log\n*-wip/\n", 0)
			r.Skill("team/skills/tool", "A tool.")
			r.Skill("team/skills/pdf-wip", "Not yet.")
			return filepath.Join(r.Dir, "team"), filepath.Join(r.Dir, ".gitignore")
		},
		want:  []string{"skills/pdf-wip 2"},
		files: []string{"tool/SKILL.md"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			src, rules := c.setup(t)
			opts := repository.Options{Env: ignoreEnv(t.TempDir())}
			skills, ps, err := dir.NewSource("team", src, opts).Skills(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var got, files []string
			for _, p := range ps {
				if p.Rule != "gitignored-skill" || p.Level != skill.Warning || p.Source != "team" || p.File != rules ||
					!strings.Contains(p.Message, filepath.Join(src, filepath.FromSlash(p.Path))) {
					t.Errorf("problem %+v, want a gitignored-skill warning of team naming %s and the folder", p, rules)
				}
				got = append(got, fmt.Sprintf("%s %d", p.Path, p.Line))
			}
			for _, s := range skills {
				for _, f := range s.Listing {
					files = append(files, s.Name+"/"+f.Path)
				}
			}
			if !slices.Equal(got, c.want) || !slices.Equal(files, c.files) {
				t.Errorf("warnings %q, files %q; want %q and %q", got, files, c.want, c.files)
			}
			if _, ps, _ := dir.NewLocal("workspace", src, opts).Skills(context.Background()); len(ps) > 0 {
				t.Errorf("a layer's problems %+v, want none", ps)
			}
		})
	}
}

// TestDirSourceRevisionFollowsIgnoredFolders: a skill folder that a rule
// leaves out appearing changes the source's revision, so the next sync
// reads the source and warns of it; a file changed inside a folder left
// out changes nothing, and no more is read for it than before.
func TestDirSourceRevisionFollowsIgnoredFolders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(root, ".gitignore"), "*-wip/\n")
	skilltest.Skill(t, filepath.Join(root, "skills"), "tool", "A tool.", nil)
	src := dir.NewSource("team", root, repository.Options{Env: ignoreEnv(t.TempDir())})
	before, err := src.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wip := skilltest.Skill(t, filepath.Join(root, "skills"), "pdf-wip", "Not yet.", nil)
	after, err := src.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if before == after {
		t.Errorf("the revision %s did not change with a skill folder the rules leave out", before)
	}
	skilltest.WriteFile(t, filepath.Join(wip, "notes.md"), "n\n")
	if again, err := src.Sync(ctx); err != nil || again != after {
		t.Errorf("revision %s, %v after a file inside the folder left out; want %s", again, err, after)
	}
}
