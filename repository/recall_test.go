package repository_test

import (
	"context"
	"io/fs"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// recalled is what a sync keeps of a skill for Options.Recalled: its
// frontmatter and the content key of its folder.
type recalled struct {
	meta skill.Meta
	key  string
}

// recallUp is an upstream of three skills: alpha with a script, beta
// with notes, and gamma, whose main file is skill.md.
func recallUp(t *testing.T) *gittest.Repo {
	t.Helper()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/alpha", "Alpha.")
	up.Write("skills/alpha/scripts/run.sh", "#!/bin/sh\necho alpha\n", 0o755)
	up.Skill("skills/beta", "Beta.")
	up.Write("skills/beta/notes.md", "beta notes\n", 0o644)
	up.Write("skills/gamma/skill.md", skilltest.SkillMD("gamma", "Gamma."), 0o644)
	up.Commit("one")
	return up
}

// A changed skill whose SKILL.md did not change takes its frontmatter
// from Options.Recalled, unparsed, and is still listed as it is now; one
// whose SKILL.md changed, or whose answer does not fit it, is read.
func TestRecalledFrontmatterOfAChangedSkill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up := recallUp(t)
	g := newGit(t, up.URL(), "")
	fetch(t, g)
	before, err := g.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first, _, err := repository.Discover(ctx, before, "team", "repo", repository.Options{})
	if err != nil || len(first) != 3 {
		t.Fatalf("discover: %v %v", skillNames(first), err)
	}
	// The answers say something SKILL.md does not: what discovery returns
	// shows where it came from.
	records := map[string]recalled{}
	for _, s := range first {
		m := s.Meta()
		m.Description = "From the record."
		records[s.Name] = recalled{m, repository.ContentKey(s.Files)}
	}
	// alpha changes in a script, beta in its SKILL.md, and gamma gets a
	// SKILL.md beside its skill.md.
	up.Write("skills/alpha/scripts/run.sh", "#!/bin/sh\necho alpha, longer now\n", 0o755)
	up.Skill("skills/beta", "Beta, changed.")
	up.Skill("skills/gamma", "Gamma, in SKILL.md.")
	up.Commit("two")
	fetch(t, g)
	after, err := g.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		// answer changes alpha's answer; nil keeps it.
		answer    func(r *recalled)
		recalled  bool
		wantAlpha string
	}{
		{"fits", nil, true, "From the record."},
		{"another path", func(r *recalled) { r.meta.Path = "other/alpha" }, false, "Alpha."},
		{"another name", func(r *recalled) { r.meta.Name = "gamma" }, false, "Alpha."},
		{"a name that is no name", func(r *recalled) { r.meta.Name = "../alpha" }, false, "Alpha."},
		{"no description", func(r *recalled) { r.meta.Description = "" }, false, "Alpha."},
		{"a key of no git tree", func(r *recalled) { r.key = "dir:alpha" }, false, "Alpha."},
		{"a tree the store lacks", func(r *recalled) { r.key = "git-tree:" + "0123456789abcdef0123456789abcdef01234567" }, false, "Alpha."},
		{"skill.md where SKILL.md is", func(r *recalled) { r.meta.File = "skill.md" }, false, "Alpha."},
		{"a SKILL.md that changed", func(r *recalled) { *r = records["beta"]; r.meta.Name, r.meta.Path = "alpha", "skills/alpha" }, false, "Alpha."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			answers := maps.Clone(records)
			if tc.answer != nil {
				r := answers["alpha"]
				tc.answer(&r)
				answers["alpha"] = r
			}
			opts := repository.Options{Recalled: func(name string) (skill.Meta, string, bool) {
				r, ok := answers[name]
				return r.meta, r.key, ok
			}}
			got, problems, err := repository.Discover(ctx, after, "team", "repo", opts)
			if err != nil || len(otherThanSkillMDName(problems)) > 0 || !slices.Equal(skillNames(got), []string{"alpha", "beta", "gamma"}) {
				t.Fatalf("discover: %v %v %v", skillNames(got), problems, err)
			}
			alpha, beta, gamma := got[0], got[1], got[2]
			if alpha.Description != tc.wantAlpha {
				t.Errorf("alpha's description %q, want %q", alpha.Description, tc.wantAlpha)
			}
			if beta.Description != "Beta, changed." {
				t.Errorf("beta, whose SKILL.md changed, has the description %q", beta.Description)
			}
			// Its skill.md is as it was, but SKILL.md is the main file now.
			if gamma.Description != "Gamma, in SKILL.md." || gamma.File != "SKILL.md" {
				t.Errorf("gamma, with a SKILL.md beside its skill.md: %q from %s", gamma.Description, gamma.File)
			}
			// Listed as it is now, and named by its new tree, either way.
			want := []skill.File{{Path: "SKILL.md"}, {Path: "scripts/run.sh", Size: int64(len("#!/bin/sh\necho alpha, longer now\n")), Mode: 0o755}}
			if len(alpha.Listing) != 2 || alpha.Listing[0].Path != want[0].Path || alpha.Listing[1] != want[1] {
				t.Errorf("alpha's listing %+v, want the scripts/run.sh of now: %+v", alpha.Listing, want[1])
			}
			if key := repository.ContentKey(alpha.Files); key == "" || key == records["alpha"].key {
				t.Errorf("alpha's content key %q is the old one", key)
			}
			if tc.recalled && alpha.Meta().File != "SKILL.md" {
				t.Errorf("alpha's main file %q", alpha.Meta().File)
			}
		})
	}
}

// answering opens the cache at root and returns it with the options it
// answers discovery of source team with, under settings. The caller
// closes it: the next sync waits for its lock.
func answering(t *testing.T, root, settings string) (*materialize.Cache, repository.Options) {
	t.Helper()
	c, err := materialize.OpenCache(context.Background(), root, time.Second, materialize.CheckRecord)
	if err != nil {
		t.Fatal(err)
	}
	var opts repository.Options
	c.Answer(&opts, "team", settings)
	return c, opts
}

// The cache's records answer Recalled for a git source as a sync leaves
// them: the key of a skill read whole, and of one taken from its record
// (Known) by a sync that changed another skill, is one SameContent takes
// of the skill's next tree, while its SKILL.md is unchanged.
func TestRecalledThroughTheCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up := recallUp(t)
	g := newGit(t, up.URL(), "")
	root := t.TempDir()
	const settings = "discovery settings"
	// step fetches, discovers with what the cache answers and commits
	// what it found, as a sync does; it returns the tree it read.
	step := func() fs.FS {
		t.Helper()
		res := fetch(t, g)
		fsys, err := g.FS(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c, opts := answering(t, root, settings)
		defer c.Close()
		skills, problems, err := repository.Discover(ctx, fsys, "team", "repo", opts)
		if err != nil || len(otherThanSkillMDName(problems)) > 0 || len(skills) != 3 {
			t.Fatalf("discover: %v %v %v", skillNames(skills), problems, err)
		}
		r := c.SyncSource(ctx, materialize.Source{Name: "team", Revision: string(res.Revision), Discovery: settings, Skills: materialize.FromSkills(skills, false)})
		if len(r.Errors) > 0 {
			t.Fatal(r.Errors)
		}
		if err := c.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		return fsys
	}
	// recalled is what the cache now answers for alpha, whose description
	// must be want.
	recalled := func(want string) string {
		t.Helper()
		c, opts := answering(t, root, settings)
		defer c.Close()
		meta, key, ok := opts.Recalled("alpha")
		if !ok || meta.Name != "alpha" || meta.Path != "skills/alpha" || meta.Description != want {
			t.Fatalf("Recalled(alpha) = %+v %q %v, want the description %q", meta, key, ok, want)
		}
		return key
	}
	// sameHead says whether SKILL.md of alpha in fsys is the one key names.
	sameHead := func(fsys fs.FS, key string) bool {
		t.Helper()
		sub, err := fs.Sub(fsys, "skills/alpha")
		if err != nil {
			t.Fatal(err)
		}
		return repository.SameContent(sub, key, "SKILL.md")
	}

	step() // alpha read whole
	whole := recalled("Alpha.")
	up.Skill("skills/beta", "Beta, changed.")
	up.Commit("two")
	step() // alpha taken from its record
	known := recalled("Alpha.")
	if known != whole {
		t.Errorf("alpha's key went from %q to %q, its tree unchanged", whole, known)
	}
	up.Write("skills/alpha/scripts/run.sh", "#!/bin/sh\necho three\n", 0o755)
	up.Commit("three")
	three := step() // alpha changed in a script: its frontmatter recalled
	if !sameHead(three, whole) || !sameHead(three, known) {
		t.Errorf("the cache's key of alpha does not find its SKILL.md unchanged: %q", known)
	}
	key := recalled("Alpha.")
	if key == known {
		t.Errorf("alpha's key %q did not move with its tree", key)
	}
	up.Skill("skills/alpha", "Alpha, changed.")
	up.Commit("four")
	if four := step(); sameHead(four, key) {
		t.Error("alpha's changed SKILL.md is found unchanged")
	}
	recalled("Alpha, changed.")
}

// otherThanSkillMDName is problems but gamma's warning that its main file
// is skill.md, which these tests keep on purpose.
func otherThanSkillMDName(problems []skill.Problem) []skill.Problem {
	return slices.DeleteFunc(slices.Clone(problems), func(p skill.Problem) bool { return p.Rule == "skill-md-name" })
}
