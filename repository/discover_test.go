package repository_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/repository"
	dirsource "github.com/skillsync/skillsync/repository/dir"
	"github.com/skillsync/skillsync/repository/repositorytest"
	"github.com/skillsync/skillsync/skill"
)

// countingFS counts the directory entries read through it, the work
// discovery does, and passes the identity of directories through.
type countingFS struct {
	fsys    repository.DirKeyFS
	entries int
}

func (c *countingFS) Open(name string) (fs.File, error) {
	f, err := c.fsys.Open(name)
	if err != nil {
		return nil, err
	}
	if dir, ok := f.(fs.ReadDirFile); ok {
		return &countingDir{ReadDirFile: dir, c: c}, nil
	}
	return f, nil
}

func (c *countingFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(c.fsys, name) }

func (c *countingFS) DirKey(name string) (string, error) { return c.fsys.DirKey(name) }

type countingDir struct {
	fs.ReadDirFile
	c *countingFS
}

func (d *countingDir) ReadDir(n int) ([]fs.DirEntry, error) {
	entries, err := d.ReadDirFile.ReadDir(n)
	d.c.entries += len(entries)
	return entries, err
}

func hasProblem(problems []skill.Problem, rule, path string) bool {
	return slices.ContainsFunc(problems, func(p skill.Problem) bool {
		return p.Rule == rule && (path == "" || p.Path == path)
	})
}

func skillNames(skills []skill.Skill) []string {
	var out []string
	for _, s := range skills {
		out = append(out, s.Name)
	}
	return out
}

// A repository of reused trees: each level holds 20 entries naming the same
// subtree, eight levels deep. Read path by path it is 20^8 directories;
// read tree by tree it is a few hundred entries.
func TestDiscoverReadsARepeatedGitTreeOnce(t *testing.T) {
	t.Parallel()
	const fanout, depth = 20, 8
	up := gittest.NewRepo(t, "main")
	md := up.Blob("---\nname: leaf\ndescription: d\n---\n")
	tree := up.MkTree("100644 blob " + md + "\tSKILL.md")
	for level := 0; level < depth; level++ {
		var lines []string
		for i := 0; i < fanout; i++ {
			lines = append(lines, fmt.Sprintf("040000 tree %s\td%02d", tree, i))
		}
		tree = up.MkTree(lines...)
	}
	good := up.MkTree("100644 blob " + up.Blob("---\nname: good\ndescription: d\n---\n") + "\tSKILL.md")
	up.CommitTree("main", "reused trees", "040000 tree "+tree+"\tmaze", "040000 tree "+good+"\tgood")

	g := newGit(t, up.URL(), "main")
	fetch(t, g)
	fsys, err := g.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := &countingFS{fsys: fsys}
	skills, problems, err := repository.Discover(context.Background(), c, "team", "repo", repository.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.entries > 1000 {
		t.Errorf("discovery read %d entries of a repository of %d distinct trees", c.entries, depth+2)
	}
	if !slices.Equal(skillNames(skills), []string{"good"}) {
		t.Errorf("skills = %v", skillNames(skills))
	}
	if hasProblem(problems, "source-too-many-entries", "") {
		t.Errorf("the budget ran out: %v", problems)
	}
	deep := "maze" + strings.Repeat("/d00", depth)
	if !hasProblem(problems, "skill-too-deep", deep) {
		t.Errorf("the skill at %s is not reported as too deep: %v", deep, problems)
	}
}

// A local skills/ holding 20 links to itself: each link leads back to the
// root, which is read once.
func TestDiscoverStopsAtLinksToAParent(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	repositorytest.WriteTree(t, root, map[string]repositorytest.File{"real/SKILL.md": {Data: "---\nname: real\ndescription: d\n---\n"}})
	for i := 0; i < 20; i++ {
		must(t, os.Symlink(".", filepath.Join(root, fmt.Sprintf("self%02d", i))))
	}
	fsys, err := repository.NewDirFS(root)
	if err != nil {
		t.Fatal(err)
	}
	c := &countingFS{fsys: fsys}
	skills, problems, err := repository.Discover(context.Background(), c, "ws", "skills", repository.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.entries > 100 {
		t.Errorf("discovery read %d entries of a directory of 21", c.entries)
	}
	if !slices.Equal(skillNames(skills), []string{"real"}) {
		t.Errorf("skills = %v", skillNames(skills))
	}
	if !hasProblem(problems, "dir-loop", "self00") {
		t.Errorf("no dir-loop problem for self00: %v", problems)
	}

	// Through the adapter as well, which is what list runs.
	skills, _, err = dirsource.NewLocal("ws", root, repository.Options{}).Skills(context.Background())
	if err != nil || !slices.Equal(skillNames(skills), []string{"real"}) {
		t.Errorf("Local.Skills = %v, %v", skillNames(skills), err)
	}
}

// A wide source over max_entries is a problem naming the source and the
// place discovery stopped, not a long walk.
func TestDiscoverStopsAtMaxEntries(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	files := map[string]repositorytest.File{"aaa/SKILL.md": {Data: "---\nname: aaa\ndescription: d\n---\n"}}
	for i := 0; i < 200; i++ {
		files[fmt.Sprintf("wide/d%03d/README.md", i)] = repositorytest.File{Data: "x"}
	}
	repositorytest.WriteTree(t, root, files)
	fsys, err := repository.NewDirFS(root)
	if err != nil {
		t.Fatal(err)
	}
	c := &countingFS{fsys: fsys}
	skills, problems, err := repository.Discover(context.Background(), c, "big", "big", repository.Options{MaxEntries: 50})
	if err != nil {
		t.Fatal(err)
	}
	if c.entries > 50+256 {
		t.Errorf("discovery read %d entries with max_entries 50", c.entries)
	}
	i := slices.IndexFunc(problems, func(p skill.Problem) bool { return p.Rule == "source-too-many-entries" })
	if i < 0 {
		t.Fatalf("no source-too-many-entries problem: %v", problems)
	}
	if p := problems[i]; p.Source != "big" || p.Path == "" || p.Level != skill.Error {
		t.Errorf("problem %+v does not name the source and the path, or is not an error", p)
	}
	if !slices.Equal(skillNames(skills), []string{"aaa"}) {
		t.Errorf("skills found before the limit = %v, want aaa", skillNames(skills))
	}

	// The budget covers a skill's own files too.
	root = t.TempDir()
	files = map[string]repositorytest.File{"many/SKILL.md": {Data: "---\nname: many\ndescription: d\n---\n"}}
	for i := 0; i < 100; i++ {
		files[fmt.Sprintf("many/refs/r%03d/x.md", i)] = repositorytest.File{Data: "x"}
	}
	repositorytest.WriteTree(t, root, files)
	skills, problems, err = dirsource.NewLocal("big", root, repository.Options{MaxEntries: 50}).Skills(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(skills) != 0 || !hasProblem(problems, "source-too-many-entries", "many") {
		t.Errorf("a skill whose files exceed max_entries: skills %v, problems %v", skillNames(skills), problems)
	}
}

// The source's timeout covers discovery: a context that has ended stops
// it with an error, never a partial list passed off as the whole.
func TestDiscoverHonoursTimeout(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	repositorytest.WriteTree(t, root, repositorytest.Fixture())
	_, _, err := dirsource.NewLocal("l", root, repository.Options{Timeout: 1}).Skills(context.Background())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Skills with a timeout of 1ns = %v, want DeadlineExceeded", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := dirsource.NewLocal("l", root, repository.Options{}).Skills(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Skills with a cancelled context = %v", err)
	}
}

// Options.Expect makes room for the skills a source held last time at
// once: discovery finds the same, with far fewer allocations than
// growing its lists through hundreds of skills. (Not parallel: it
// counts the process's allocations.)
func TestDiscoverMakesRoomForTheExpectedSkills(t *testing.T) {
	const n = 300
	fsys := fstest.MapFS{}
	for i := range n {
		name := fmt.Sprintf("s%03d", i)
		fsys["skills/"+name+"/SKILL.md"] = &fstest.MapFile{Data: []byte("---\nname: " + name + "\ndescription: d\n---\n")}
	}
	discover := func(expect int) ([]skill.Skill, float64) {
		var got []skill.Skill
		allocs := testing.AllocsPerRun(3, func() {
			var err error
			got, _, err = repository.Discover(context.Background(), fsys, "team", "repo", repository.Options{Expect: expect})
			if err != nil {
				t.Fatal(err)
			}
		})
		return got, allocs
	}
	plain, grown := discover(0)
	hinted, roomy := discover(n)
	if len(plain) != n || !slices.EqualFunc(plain, hinted, func(a, b skill.Skill) bool { return a.Name == b.Name && a.Path == b.Path }) {
		t.Fatalf("with Expect, discovery found %d skills, without %d", len(hinted), len(plain))
	}
	// Grown a quarter at a time, the lists took 17 allocations more for
	// 300 skills.
	if roomy > grown-10 {
		t.Errorf("%.0f allocations with Expect, %.0f without", roomy, grown)
	}
}

// A skill below the depth discovery searches at all (32 folders) is
// reported as too deep, as one at depth 6 or 21 is: it was dropped in
// silence.
func TestDiscoverReportsASkillPastTheSearchDepth(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	deep := strings.Repeat("d/", 34) + "lost"
	repositorytest.WriteTree(t, root, map[string]repositorytest.File{
		"good/SKILL.md":    {Data: "---\nname: good\ndescription: d\n---\n"},
		deep + "/SKILL.md": {Data: "---\nname: lost\ndescription: d\n---\n"},
	})
	fsys, err := repository.NewDirFS(root)
	if err != nil {
		t.Fatal(err)
	}
	skills, problems, err := repository.Discover(context.Background(), fsys, "ws", "skills", repository.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(skillNames(skills), []string{"good"}) {
		t.Errorf("skills = %v", skillNames(skills))
	}
	if at := strings.TrimSuffix(strings.Repeat("d/", 32), "/"); !hasProblem(problems, "skill-too-deep", at) {
		t.Errorf("the skill at %s is not reported: %v", deep, problems)
	}
}
