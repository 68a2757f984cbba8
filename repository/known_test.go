package repository_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/repository"
	dirsource "github.com/skillsync/skillsync/repository/dir"
	"github.com/skillsync/skillsync/repository/git"
	"github.com/skillsync/skillsync/skill"
)

// knownRepo is a fetched git source of two skills and its skills folder.
func knownRepo(t *testing.T) *git.TreeFS {
	t.Helper()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/alpha", "Alpha.")
	up.Write("skills/alpha/scripts/run.sh", "#!/bin/sh\necho alpha\n", 0o755)
	up.Write("skills/alpha/ref/deep/notes.md", "notes", 0o644)
	up.Skill("skills/beta", "Beta.")
	up.Commit("two skills")
	return fetchedTree(t, up)
}

// fetchedTree fetches up into a store of its own and returns the tree
// of its fetched head.
func fetchedTree(t *testing.T, up *gittest.Repo) *git.TreeFS {
	t.Helper()
	g := newGit(t, up.URL(), "")
	fetch(t, g)
	fsys, err := g.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return fsys
}

type record struct {
	meta  skill.Meta
	files []skill.File
}

// recordsOf is what a sync keeps of discovered skills, by content key.
func recordsOf(t *testing.T, skills []skill.Skill) map[string]record {
	t.Helper()
	out := map[string]record{}
	for _, s := range skills {
		tree, ok := s.Files.(interface{ TreeHash() string })
		if !ok {
			t.Fatalf("skill %s: its files name no tree", s.Name)
		}
		out["tree:"+tree.TreeHash()] = record{s.Meta(), s.FileList()}
	}
	return out
}

func TestKnownSkillsAreTakenFromTheirRecord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fsys := knownRepo(t)
	first, _, err := repository.Discover(ctx, fsys, "team", "repo", repository.Options{})
	if err != nil || len(first) != 2 {
		t.Fatalf("discover: %v %v", skillNames(first), err)
	}
	records := recordsOf(t, first)
	// The record says something SKILL.md does not: what discovery returns
	// shows where it came from.
	for key, r := range records {
		if r.meta.Name == "alpha" {
			r.meta.Description = "From the record."
			records[key] = r
		}
	}
	// Asked from the walk and from the reads ahead of it at once.
	var mu sync.Mutex
	var asked []string
	opts := repository.Options{Known: func(key string) (skill.Meta, []skill.File, bool) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, key)
		r, ok := records[key]
		return r.meta, r.files, ok
	}}
	got, problems, err := repository.Discover(ctx, fsys, "team", "repo", opts)
	if err != nil || len(problems) > 0 || !slices.Equal(skillNames(got), []string{"alpha", "beta"}) {
		t.Fatalf("discover with records: %v %v %v", skillNames(got), problems, err)
	}
	if len(asked) == 0 {
		t.Fatal("Known was never asked")
	}
	alpha := got[0]
	if alpha.Description != "From the record." {
		t.Errorf("alpha was read again: %q", alpha.Description)
	}
	if !slices.Equal(alpha.Listing, first[0].Listing) {
		t.Errorf("listing %v, want %v", alpha.Listing, first[0].Listing)
	}
	// Its files are there to read all the same, and name their tree.
	data, err := fs.ReadFile(alpha.Files, "scripts/run.sh")
	if err != nil || string(data) != "#!/bin/sh\necho alpha\n" {
		t.Errorf("read a known skill's file: %q %v", data, err)
	}
	if info, err := fs.Stat(alpha.Files, "ref/deep"); err != nil || !info.IsDir() {
		t.Errorf("stat a known skill's folder: %v", err)
	}
	if tree := alpha.Files.(interface{ TreeHash() string }).TreeHash(); "tree:"+tree != keyOf(records, "alpha") {
		t.Errorf("tree %s", tree)
	}
	// It names its content as the skill read whole does: the fingerprint
	// a sync compares, so an unchanged known skill is not read to be
	// found unchanged.
	if key, want := repository.ContentKey(alpha.Files), repository.ContentKey(first[0].Files); key == "" || key != want {
		t.Errorf("content key of a known skill %q, read whole %q", key, want)
	}

	// A record of the same content at another path is not taken.
	for key, r := range records {
		r.meta.Path = "elsewhere/" + r.meta.Name
		r.meta.Description = "From the record."
		records[key] = r
	}
	got, _, err = repository.Discover(ctx, fsys, "team", "repo", opts)
	if err != nil || len(got) != 2 || got[0].Description != "Alpha." {
		t.Errorf("a record of another path was taken: %v %v", got, err)
	}
}

func keyOf(records map[string]record, name string) string {
	for key, r := range records {
		if r.meta.Name == name {
			return key
		}
	}
	return ""
}

// TestKnownIsAskedOnlyForContentKeys: a directory's inode says nothing
// of its content, so a local source is always read, and neither Known nor
// Recalled is asked.
func TestKnownIsAskedOnlyForContentKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"alpha", "beta"} {
		p := filepath.Join(dir, "skills", name, "SKILL.md")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("---\nname: "+name+"\ndescription: D.\n---\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	asked, recalled := 0, 0
	opts := repository.Options{Known: func(string) (skill.Meta, []skill.File, bool) {
		asked++
		return skill.Meta{Name: "x", Description: "x", File: "SKILL.md", Path: "skills/alpha"}, []skill.File{{Path: "SKILL.md"}}, true
	}, Recalled: func(name string) (skill.Meta, string, bool) {
		recalled++
		return skill.Meta{Name: name, Description: "x", File: "SKILL.md", Path: "skills/" + name}, "git-tree:0123456789abcdef0123456789abcdef01234567", true
	}}
	skills, _, err := dirsource.NewLocal("local", dir, opts).Skills(context.Background())
	if err != nil || !slices.Equal(skillNames(skills), []string{"alpha", "beta"}) || asked != 0 || recalled != 0 {
		t.Errorf("skills %v, Known asked %d times, Recalled %d: %v", skillNames(skills), asked, recalled, err)
	}
}

// TestKnownSkillsSpendTheBudget: a source comes out of max_entries as it
// does when every skill is read, so which skills are kept does not
// depend on what the cache remembers.
func TestKnownSkillsSpendTheBudget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fsys := knownRepo(t)
	first, _, err := repository.Discover(ctx, fsys, "team", "repo", repository.Options{})
	if err != nil {
		t.Fatal(err)
	}
	records := recordsOf(t, first)
	known := func(key string) (skill.Meta, []skill.File, bool) {
		r, ok := records[key]
		return r.meta, r.files, ok
	}
	// The smallest budget a full read fits in.
	fits := func(opts repository.Options) bool {
		skills, _, err := repository.Discover(ctx, fsys, "team", "repo", opts)
		return err == nil && len(skills) == 2
	}
	need := 0
	for n := 1; n < 500; n++ {
		if fits(repository.Options{MaxEntries: n}) {
			need = n
			break
		}
	}
	if need == 0 {
		t.Fatal("no budget fits the source")
	}
	if !fits(repository.Options{MaxEntries: need, Known: known}) || fits(repository.Options{MaxEntries: need - 1, Known: known}) {
		t.Errorf("with records the source does not need exactly %d entries", need)
	}
}

// With Knows set, the reads ahead ask it, not Known, to pass a known
// folder by, and only the walk asks Known: each answer decodes a skill's
// frontmatter and lists its files, for thousands of skills in a sync.
func TestKnownIsNotAskedTwiceForOneFolder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up := gittest.NewRepo(t, "main")
	const n = 40
	for i := range n {
		up.Skill(fmt.Sprintf("skills/s%02d", i), fmt.Sprintf("Skill %d.", i))
	}
	up.Commit("forty skills")
	fsys := fetchedTree(t, up)
	first, _, err := repository.Discover(ctx, fsys, "team", "repo", repository.Options{})
	if err != nil || len(first) != n {
		t.Fatalf("discover: %d skills, %v", len(first), err)
	}
	records := recordsOf(t, first)
	var mu sync.Mutex
	asked := map[string]int{}
	opts := repository.Options{Known: func(key string) (skill.Meta, []skill.File, bool) {
		mu.Lock()
		defer mu.Unlock()
		asked[key]++
		r, ok := records[key]
		return r.meta, r.files, ok
	}, Knows: func(key string) bool {
		_, ok := records[key]
		return ok
	}}
	got, _, err := repository.Discover(ctx, fsys, "team", "repo", opts)
	if err != nil || len(got) != n {
		t.Fatalf("discover with records: %d skills, %v", len(got), err)
	}
	if len(asked) < n {
		t.Fatalf("Known was asked of %d keys, want at least the %d folders'", len(asked), n)
	}
	for key, times := range asked {
		if times > 1 {
			t.Errorf("Known was asked %d times of %s", times, key)
		}
	}
}

// TestKnownRecordWithAGitFolderIsReadAgain: a record an older skillsync
// wrote may list a file git would take for a repository's folder; the
// skill is read again, and its listing leaves it out.
func TestKnownRecordWithAGitFolderIsReadAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fsys := knownRepo(t)
	records := recordsSaying(t, fsys)
	for key, r := range records {
		if r.meta.Name == "alpha" {
			r.files = append(slices.Clone(r.files), skill.File{Path: "scripts/.GIT", Size: 20})
			records[key] = r
		}
	}
	opts := repository.Options{Known: knownFrom(records)}
	got, _, err := repository.Discover(ctx, fsys, "team", "repo", opts)
	if err != nil || len(got) != 2 {
		t.Fatalf("discover with records: %v %v", skillNames(got), err)
	}
	if got[0].Description != "Alpha." || slices.ContainsFunc(got[0].Listing, func(f skill.File) bool { return skill.GitPath(f.Path) }) {
		t.Errorf("alpha was taken from a record that lists a git folder: %q %v", got[0].Description, got[0].Listing)
	}
	if got[1].Description != "From the record." {
		t.Errorf("beta, whose record is sound, was read again: %q", got[1].Description)
	}
}

// TestLateAnswersAreTakenAtDiscovery: Options.Late sets Known on
// discovery's own copy of the options as it starts, for a source opened
// before its answers were known; the options it was given stay as they
// were.
func TestLateAnswersAreTakenAtDiscovery(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fsys := knownRepo(t)
	records := recordsSaying(t, fsys)
	var answers func(*repository.Options) // none yet
	opts := repository.Options{Late: func(o *repository.Options) {
		if answers != nil {
			answers(o)
		}
	}}
	if got, _, err := repository.Discover(ctx, fsys, "team", "repo", opts); err != nil || got[0].Description == "From the record." {
		t.Fatalf("discovery before any answer took a record: %v %v", got, err)
	}
	answers = func(o *repository.Options) { o.Known = knownFrom(records) }
	got, _, err := repository.Discover(ctx, fsys, "team", "repo", opts)
	if err != nil || len(got) != 2 || got[0].Description != "From the record." || got[1].Description != "From the record." {
		t.Fatalf("discovery after the answers came: %+v %v", got, err)
	}
	if opts.Known != nil {
		t.Error("Late changed the caller's options")
	}
}

// recordsSaying discovers knownRepo's fsys once and returns its skills'
// records, each with a description its SKILL.md does not have: what a
// later discovery returns then says where it came from.
func recordsSaying(t *testing.T, fsys fs.FS) map[string]record {
	t.Helper()
	first, _, err := repository.Discover(context.Background(), fsys, "team", "repo", repository.Options{})
	if err != nil || len(first) != 2 {
		t.Fatalf("discover: %v %v", skillNames(first), err)
	}
	records := recordsOf(t, first)
	for key, r := range records {
		r.meta.Description = "From the record."
		records[key] = r
	}
	return records
}

// knownFrom answers Options.Known from records.
func knownFrom(records map[string]record) func(string) (skill.Meta, []skill.File, bool) {
	return func(key string) (skill.Meta, []skill.File, bool) {
		r, ok := records[key]
		return r.meta, r.files, ok
	}
}
