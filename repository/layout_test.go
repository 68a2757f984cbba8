package repository_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/repository"
	dirsource "github.com/skillsync/skillsync/repository/dir"
	"github.com/skillsync/skillsync/repository/repositorytest"
	"github.com/skillsync/skillsync/skill"
	"github.com/skillsync/skillsync/workspace"
)

func skillMD(name string) repositorytest.File {
	return repositorytest.File{Data: skilltest.SkillMD(name, "The "+name+" skill.")}
}

// localSkills writes files into a new directory and discovers it as a
// local source.
func localSkills(t *testing.T, files map[string]repositorytest.File, opts repository.Options) ([]skill.Skill, []skill.Problem) {
	t.Helper()
	dir := t.TempDir()
	repositorytest.WriteTree(t, dir, files)
	skills, problems, err := dirsource.NewLocal("src", dir, opts).Skills(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return skills, problems
}

func skillPaths(skills []skill.Skill) []string {
	var out []string
	for _, s := range skills {
		out = append(out, s.Path)
	}
	return out
}

// The folders other tools read are found without a path:, and a skill
// elsewhere is then not looked for.
func TestDiscoverToolFolders(t *testing.T) {
	t.Parallel()
	files := map[string]repositorytest.File{"loose/SKILL.md": skillMD("loose")}
	var want []string
	for _, dir := range []string{"skills", "skills/.curated", "skills/.experimental", "skills/.system", ".agents/skills", ".claude/skills", ".cursor/skills", ".github/skills"} {
		name := strings.NewReplacer("/", "-", ".", "").Replace(dir)
		files[dir+"/"+name+"/SKILL.md"] = skillMD(name)
		want = append(want, dir+"/"+name)
	}
	// A category folder inside skills/ is walked as the whole source was.
	files["skills/office/pdf/SKILL.md"] = skillMD("pdf")
	want = append(want, "skills/office/pdf")
	slices.Sort(want)

	skills, problems := localSkills(t, files, repository.Options{})
	if got := skillPaths(skills); !slices.Equal(got, want) {
		t.Errorf("skills at %v, want %v (problems %v)", got, want, problems)
	}
}

// Every project folder of the agent table is a folder discovery reads,
// the ones only the table names too (.bob/skills, .factory/skills,
// .rovodev/skills were once read by one and not the other).
func TestDiscoverEveryAgentFolder(t *testing.T) {
	t.Parallel()
	files := map[string]repositorytest.File{"loose/SKILL.md": skillMD("loose")}
	var want []string
	for _, a := range agent.Agents() {
		for _, dir := range append([]string{a.Project}, a.Also...) {
			if dir == "skills" || dir == "" { // "": an agent that reads AGENTS.md only
				continue
			}
			name := "s" + strings.NewReplacer("/", "-", ".", "").Replace(dir)
			if _, dup := files[dir+"/"+name+"/SKILL.md"]; dup {
				continue
			}
			files[dir+"/"+name+"/SKILL.md"] = skillMD(name)
			want = append(want, dir+"/"+name)
		}
	}
	slices.Sort(want)
	for _, dir := range []string{".bob/skills", ".factory/skills", ".rovodev/skills", ".codex/skills", ".gemini/skills"} {
		if !slices.ContainsFunc(want, func(p string) bool { return strings.HasPrefix(p, dir+"/") }) {
			t.Fatalf("%s is no agent's folder in the table", dir)
		}
	}
	skills, problems := localSkills(t, files, repository.Options{})
	if got := skillPaths(skills); !slices.Equal(got, want) {
		t.Errorf("skills at %v, want %v (problems %v)", got, want, problems)
	}
}

// A folder linked to another (.claude/skills -> ../skills) is read once,
// with no warning.
func TestDiscoverLinkedToolFolderIsReadOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repositorytest.WriteTree(t, dir, map[string]repositorytest.File{"skills/pdf/SKILL.md": skillMD("pdf")})
	must(t, os.MkdirAll(filepath.Join(dir, ".claude"), 0o755))
	must(t, os.Symlink("../skills", filepath.Join(dir, ".claude", "skills")))
	skills, problems, err := dirsource.NewLocal("src", dir, repository.Options{}).Skills(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := skillPaths(skills); !slices.Equal(got, []string{"skills/pdf"}) || len(problems) > 0 {
		t.Errorf("skills %v, problems %v", got, problems)
	}
}

// Without any known folder, the whole source is walked as before, and a
// skill below the depth limit is reported.
func TestDiscoverFallsBackToTheWalk(t *testing.T) {
	t.Parallel()
	skills, problems := localSkills(t, map[string]repositorytest.File{
		"group/docs/SKILL.md":         skillMD("docs"),
		"a/b/c/d/too-deep/SKILL.md":   skillMD("too-deep"),
		".claude/settings.json":       {Data: "{}"},
		".claude-plugin/plugin.json":  {Data: `{"name": "p"}`},
		"empty/.claude/skills/README": {Data: "not a skill"},
	}, repository.Options{})
	if got := skillPaths(skills); !slices.Equal(got, []string{"group/docs"}) {
		t.Errorf("skills at %v", got)
	}
	if !hasProblem(problems, "skill-too-deep", "a/b/c/d/too-deep") {
		t.Errorf("the skill below the depth limit is not reported: %v", problems)
	}
}

// marketplace.json: plugin roots resolved as Claude Code resolves them,
// each plugin's declared skill paths (a skill, or a folder of skills), and
// its skills/ folder when it declares none.
func TestDiscoverMarketplaceManifest(t *testing.T) {
	t.Parallel()
	files := map[string]repositorytest.File{
		".claude-plugin/marketplace.json": {Data: `{
  "name": "acme",
  "metadata": {"pluginRoot": "./plugins"},
  "plugins": [
    {"name": "docs", "source": "docs-plugin"},
    {"name": "office", "source": "./", "skills": ["./tools/xlsx", "./tools/docx"]},
    {"name": "own", "source": "./plugins/own"},
    {"name": "remote", "source": {"source": "github", "repo": "acme/other"}},
    {"name": "escape", "source": "../outside"},
    {"name": "bad-paths", "source": "./", "skills": ["/etc", "./tools/../../x", "./nowhere"]},
    {"name": "gone", "source": "./plugins/gone"}
  ]
}`},
		"plugins/docs-plugin/skills/write/SKILL.md":    skillMD("write"),
		"tools/xlsx/SKILL.md":                          skillMD("xlsx"),
		"tools/docx/SKILL.md":                          skillMD("docx"),
		"tools/undeclared/SKILL.md":                    skillMD("undeclared"),
		"plugins/own/.claude-plugin/plugin.json":       {Data: `{"name": "own", "skills": "./lib"}`},
		"plugins/own/lib/review/SKILL.md":              skillMD("review"),
		"plugins/own/lib/lint/SKILL.md":                skillMD("lint"),
		"loose/SKILL.md":                               skillMD("loose"),
		"plugins/docs-plugin/.claude-plugin/README.md": {Data: "x"},
	}
	skills, problems := localSkills(t, files, repository.Options{})
	want := []string{"plugins/docs-plugin/skills/write", "plugins/own/lib/lint", "plugins/own/lib/review", "tools/docx", "tools/xlsx"}
	if got := skillPaths(skills); !slices.Equal(got, want) {
		t.Errorf("skills at %v, want %v", got, want)
	}
	for _, rule := range []string{"plugin-remote-source", "plugin-path-invalid", "plugin-path-missing"} {
		if !hasProblem(problems, rule, repository.MarketplaceManifest) {
			t.Errorf("no %s problem naming %s: %v", rule, repository.MarketplaceManifest, problems)
		}
	}
	if !slices.ContainsFunc(problems, func(p skill.Problem) bool {
		return p.Rule == "plugin-missing" && strings.Contains(p.Message, `plugin "gone"`) && strings.Contains(p.Message, "plugins/gone")
	}) {
		t.Errorf("the missing plugin folder is not reported: %v", problems)
	}
	invalid := 0
	for _, p := range problems {
		if p.Rule == "plugin-path-invalid" {
			invalid++
		}
	}
	if invalid != 3 {
		t.Errorf("%d plugin-path-invalid problems, want 3 (../outside, /etc, ../..): %v", invalid, problems)
	}
}

// plugin.json at the root: its declared skill paths.
func TestDiscoverPluginManifest(t *testing.T) {
	t.Parallel()
	skills, problems := localSkills(t, map[string]repositorytest.File{
		".claude-plugin/plugin.json": {Data: `{"name": "p", "skills": ["./custom", "./lib/x/y/z/one"]}`},
		"custom/a/SKILL.md":          skillMD("a"),
		"custom/b/SKILL.md":          skillMD("b"),
		"lib/x/y/z/one/SKILL.md":     skillMD("one"),
		"loose/SKILL.md":             skillMD("loose"),
	}, repository.Options{})
	if got := skillPaths(skills); !slices.Equal(got, []string{"custom/a", "custom/b", "lib/x/y/z/one"}) {
		t.Errorf("skills at %v (problems %v)", got, problems)
	}
}

// The manifests are hostile input: too large, not JSON, a link out of the
// source, a path list longer than the budget.
func TestDiscoverHostileManifests(t *testing.T) {
	t.Parallel()
	t.Run("TooLarge", func(t *testing.T) {
		big := `{"name": "p", "skills": "./s", "pad": "` + strings.Repeat("x", 2<<20) + `"}`
		_, problems := localSkills(t, map[string]repositorytest.File{
			".claude-plugin/plugin.json": {Data: big}, "s/a/SKILL.md": skillMD("a"),
		}, repository.Options{})
		if !hasProblem(problems, "plugin-manifest-too-large", repository.PluginManifest) {
			t.Errorf("problems %v", problems)
		}
	})
	t.Run("NotJSON", func(t *testing.T) {
		skills, problems := localSkills(t, map[string]repositorytest.File{
			".claude-plugin/marketplace.json": {Data: `{"plugins": [`}, "skills/a/SKILL.md": skillMD("a"),
		}, repository.Options{})
		if !hasProblem(problems, "plugin-manifest-invalid", repository.MarketplaceManifest) || len(skills) != 1 {
			t.Errorf("skills %v, problems %v", skillPaths(skills), problems)
		}
	})
	t.Run("LinkOut", func(t *testing.T) {
		outside := t.TempDir()
		repositorytest.WriteTree(t, outside, map[string]repositorytest.File{"secret/SKILL.md": skillMD("secret")})
		dir := t.TempDir()
		repositorytest.WriteTree(t, dir, map[string]repositorytest.File{".claude-plugin/plugin.json": {Data: `{"skills": "./out"}`}})
		must(t, os.Symlink(outside, filepath.Join(dir, "out")))
		skills, problems, err := dirsource.NewLocal("src", dir, repository.Options{}).Skills(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(skills) != 0 || !hasProblem(problems, "plugin-path-missing", repository.PluginManifest) {
			t.Errorf("a declared path linking out of the source: skills %v, problems %v", skillPaths(skills), problems)
		}
	})
	// A manifest that is a link out of the source, or round in a loop, is
	// the source's own content: invalid, not unreadable (which would keep
	// every cached skill of the source).
	for name, target := range map[string]string{"ManifestLinkOut": "/etc/hostname", "ManifestLinkLoop": "marketplace.json"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			repositorytest.WriteTree(t, dir, map[string]repositorytest.File{"skills/a/SKILL.md": skillMD("a")})
			must(t, os.MkdirAll(filepath.Join(dir, ".claude-plugin"), 0o755))
			must(t, os.Symlink(target, filepath.Join(dir, ".claude-plugin", "marketplace.json")))
			_, problems, err := dirsource.NewLocal("src", dir, repository.Options{}).Skills(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !hasProblem(problems, "plugin-manifest-invalid", repository.MarketplaceManifest) || hasProblem(problems, "plugin-manifest-unreadable", repository.MarketplaceManifest) {
				t.Errorf("problems %v", problems)
			}
		})
	}
	t.Run("ManyPaths", func(t *testing.T) {
		var paths []string
		for i := 0; i < 5000; i++ {
			paths = append(paths, fmt.Sprintf(`"./p%d"`, i))
		}
		_, problems := localSkills(t, map[string]repositorytest.File{
			".claude-plugin/plugin.json": {Data: `{"skills": [` + strings.Join(paths, ",") + `]}`},
		}, repository.Options{MaxEntries: 100})
		if !hasProblem(problems, "source-too-many-entries", repository.PluginManifest) {
			t.Errorf("5000 declared paths under max_entries 100: %v", problems[:min(len(problems), 3)])
		}
	})
}

// A change in a tool folder that the plain walk skips (.claude/skills)
// changes a local source's revision.
func TestLocalRevisionCoversToolFolders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	repositorytest.WriteTree(t, dir, map[string]repositorytest.File{".claude/skills/pdf/SKILL.md": skillMD("pdf")})
	r := dirsource.NewLocal("l", dir, repository.Options{})
	a, err := r.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	repositorytest.WriteTree(t, dir, map[string]repositorytest.File{".claude/skills/pdf/notes.md": {Data: "new"}})
	if b, _ := r.Sync(ctx); b == a {
		t.Error("adding .claude/skills/pdf/notes.md did not change the revision")
	}
}

// The layouts hold in a git source too.
func TestGitDiscoversPluginAndToolFolders(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Write(".claude-plugin/marketplace.json", `{"plugins": [{"name": "x", "source": "./plugins/x"}]}`, 0)
	up.Skill("plugins/x/skills/review", "Review.")
	up.Skill(".agents/skills/lint", "Lint.")
	up.Skill("elsewhere/loose", "Not looked for.")
	up.Commit("layouts")
	g := newGit(t, up.URL(), "")
	fetch(t, g)
	skills, problems, err := g.Skills(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := skillPaths(skills); !slices.Equal(got, []string{".agents/skills/lint", "plugins/x/skills/review"}) {
		t.Errorf("skills at %v (problems %v)", got, problems)
	}
}

// plugins: keeps discovery to the named plugins of the marketplace
// (names without case): no other plugin, tool folder, root skill or
// walk; a name the marketplace lacks is an error listing the ones it has,
// and a source without a marketplace says it has no plugins.
func TestDiscoverPickedPlugins(t *testing.T) {
	files := map[string]repositorytest.File{
		".claude-plugin/marketplace.json": {Data: `{"plugins": [
  {"name": "docs", "source": "./plugins/docs"},
  {"name": "dev", "source": "./plugins/dev", "skills": "./tools"}]}`},
		"plugins/docs/skills/pdf/SKILL.md": skillMD("pdf"),
		"plugins/dev/tools/lint/SKILL.md":  skillMD("lint"),
		"skills/loose/SKILL.md":            skillMD("loose"),
	}
	skills, problems := localSkills(t, files, repository.Options{Plugins: []string{"DOCS"}})
	if got := skillPaths(skills); !slices.Equal(got, []string{"plugins/docs/skills/pdf"}) || len(problems) != 0 {
		t.Errorf("plugins: [DOCS] found %v, problems %v", got, problems)
	}
	skills, problems = localSkills(t, files, repository.Options{Plugins: []string{"dev", "nope"}})
	if got := skillPaths(skills); !slices.Equal(got, []string{"plugins/dev/tools/lint"}) {
		t.Errorf("plugins: [dev, nope] found %v", got)
	}
	if !hasProblem(problems, "plugin-unknown", repository.MarketplaceManifest) || !strings.Contains(fmt.Sprint(problems), `"nope" is not a plugin of this source; it has: dev, docs`) {
		t.Errorf("problems = %v", problems)
	}
	skills, problems = localSkills(t, map[string]repositorytest.File{"skills/loose/SKILL.md": skillMD("loose")}, repository.Options{Plugins: []string{"docs"}})
	if len(skills) != 0 || !hasProblem(problems, "plugin-unknown", repository.MarketplaceManifest) {
		t.Errorf("without a marketplace: %v %v", skillPaths(skills), problems)
	}
}

// TestMayRead: discovery may read a folder under none the walk passes
// over (a dot-folder, node_modules, the drafts), or in a tool's folder it
// reads although it starts with a dot.
func TestMayRead(t *testing.T) {
	t.Parallel()
	for rel, want := range map[string]bool{
		"skills/pdf": true, "out": true, "a/b/c": true,
		".claude/skills/pdf": true, ".git/objects": false, ".skills-cache/team": false, "a/.hidden/b": false,
		"node_modules/pkg/skills": false, "web/node_modules/x": false, workspace.DraftsName + "/pdf": false,
	} {
		if got := repository.MayRead(rel); got != want {
			t.Errorf("MayRead(%q) = %v, want %v", rel, got, want)
		}
	}
}
