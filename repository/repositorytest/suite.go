// Package repositorytest is a conformance suite that every repository
// adapter passes: discovery, validation problems, depth, skipped folders,
// file modes, the size and entry limits and the skill selection behave
// the same whatever the source is.
package repositorytest

import (
	"context"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// File is one file of a fixture source.
type File struct {
	Data string
	Mode fs.FileMode // 0 means 0644
}

// Fixture is the source every adapter is asked to serve, by path.
func Fixture() map[string]File {
	md := func(name, desc string) File {
		return File{Data: skilltest.SkillMD(name, desc)}
	}
	return map[string]File{
		"pdf/SKILL.md":              md("pdf", "Read PDF files."),
		"pdf/scripts/extract.sh":    {Data: "#!/bin/sh\necho extract\n", Mode: 0o755},
		"pdf/references/format.md":  {Data: "format notes\n"},
		"pdf/nested/SKILL.md":       md("nested", "A skill inside a skill is not a skill of its own."),
		"group/docs/SKILL.md":       md("docs", "Write documentation."),
		"a/b/c/deep/SKILL.md":       md("deep", "Four levels below the root."),
		"a/b/c/d/too-deep/SKILL.md": md("too-deep", "Five levels below the root."),
		".hidden/secret/SKILL.md":   md("secret", "Inside a dot-directory."),
		"node_modules/pkg/SKILL.md": md("pkg", "Inside node_modules."),
		"_drafts/idea/SKILL.md":     md("idea", "A draft waiting for the promotion gate."),
		"broken/SKILL.md":           {Data: "---\nname: broken\n---\n"},
		"warned/SKILL.md":           md("Warned", "Upper case name."),
		"lower/skill.md":            md("lower", "A lower-case skill.md."),
		"not-a-skill/README.md":     {Data: "no SKILL.md here\n"},
	}
}

// New makes a repository that serves the files, synced and ready.
type New func(t *testing.T, files map[string]File, opts repository.Options) repository.Repository

// Run runs the suite against the adapter new makes. hasModes says whether
// the adapter keeps file modes (an embedded FS does not).
func Run(t *testing.T, newRepo New, hasModes bool) {
	ctx := context.Background()
	t.Run("Discovery", func(t *testing.T) {
		r := newRepo(t, Fixture(), repository.Options{})
		skills, problems, err := r.Skills(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range skills {
			names = append(names, s.Name+"@"+s.Path)
		}
		want := []string{"deep@a/b/c/deep", "docs@group/docs", "lower@lower", "pdf@pdf", "Warned@warned"}
		if !slices.Equal(names, want) {
			t.Errorf("skills = %v, want %v", names, want)
		}
		got := map[string]bool{}
		for _, p := range problems {
			if p.Source != r.Source() {
				t.Errorf("problem %v does not name source %s", p, r.Source())
			}
			got[p.Path+":"+p.Rule] = true
		}
		for _, key := range []string{"broken:description-missing", "warned:name-not-lowercase", "warned:name-mismatch", "a/b/c/d/too-deep:skill-too-deep"} {
			if !got[key] {
				t.Errorf("missing problem %s in %v", key, problems)
			}
		}
	})
	t.Run("Strict", func(t *testing.T) {
		r := newRepo(t, Fixture(), repository.Options{Strict: true})
		skills, _, err := r.Skills(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range skills {
			if s.Name == "Warned" {
				t.Error("strict kept a skill with warnings")
			}
		}
	})
	t.Run("Files", func(t *testing.T) {
		r := newRepo(t, Fixture(), repository.Options{})
		skills, _, err := r.Skills(ctx)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(skills, func(s skill.Skill) bool { return s.Name == "pdf" })
		if i < 0 {
			t.Fatal("pdf not found")
		}
		files, problems := skill.ListFiles(skills[i].Files, skills[i].Path, 0)
		var paths []string
		for _, f := range files {
			paths = append(paths, f.Path)
			if hasModes && f.Path == "scripts/extract.sh" && f.Mode.Perm()&0o111 == 0 {
				t.Errorf("extract.sh lost its executable bit: %v", f.Mode)
			}
		}
		sort.Strings(paths)
		if !slices.Equal(skills[i].Listing, files) {
			t.Errorf("discovery's Listing %v differs from a walk %v", skills[i].Listing, files)
		}
		want := "SKILL.md nested/SKILL.md references/format.md scripts/extract.sh"
		if strings.Join(paths, " ") != want || len(problems) > 0 {
			t.Errorf("files = %v (problems %v), want %s", paths, problems, want)
		}
		data, err := fs.ReadFile(skills[i].Files, "scripts/extract.sh")
		if err != nil || string(data) != "#!/bin/sh\necho extract\n" {
			t.Errorf("read extract.sh = %q, %v", data, err)
		}
	})
	t.Run("MaxFileSize", func(t *testing.T) {
		files := Fixture()
		files["pdf/assets/big.bin"] = File{Data: strings.Repeat("x", 2048)}
		r := newRepo(t, files, repository.Options{MaxFileSize: 1024})
		skills, problems, err := r.Skills(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(skills, func(s skill.Skill) bool { return s.Name == "pdf" }) {
			t.Error("a skill with a file over max_file_size was kept")
		}
		if !slices.ContainsFunc(problems, func(p skill.Problem) bool { return p.Rule == "file-too-large" && p.File == "pdf/assets/big.bin" }) {
			t.Errorf("no file-too-large problem naming pdf/assets/big.bin: %v", problems)
		}
	})
	t.Run("MaxSkillSize", func(t *testing.T) {
		files := Fixture()
		files["pdf/assets/big.bin"] = File{Data: strings.Repeat("x", 2048)}
		r := newRepo(t, files, repository.Options{MaxSkillSize: 2000})
		skills, problems, err := r.Skills(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(skills, func(s skill.Skill) bool { return s.Name == "pdf" }) {
			t.Error("a skill over max_skill_size was kept")
		}
		if !slices.ContainsFunc(skills, func(s skill.Skill) bool { return s.Name == "docs" }) {
			t.Error("a skill under max_skill_size was left out")
		}
		if !hasProblem(problems, r.Source(), "skill-too-large", "pdf") {
			t.Errorf("no skill-too-large problem naming pdf: %v", problems)
		}
	})
	t.Run("MaxSourceSize", func(t *testing.T) {
		// Three skills of about 1 KiB each under a cap of 2.5 KiB: in
		// path order the first two fit and the third is skipped.
		files := map[string]File{}
		for _, name := range []string{"c", "a", "b"} {
			files[name+"/SKILL.md"] = File{Data: "---\nname: " + name + "\ndescription: d\n---\n"}
			files[name+"/data.bin"] = File{Data: strings.Repeat("x", 1000)}
		}
		r := newRepo(t, files, repository.Options{MaxSourceSize: 2500})
		skills, problems, err := r.Skills(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(skills); !slices.Equal(got, []string{"a", "b"}) {
			t.Errorf("skills = %v, want a b", got)
		}
		if !hasProblem(problems, r.Source(), "source-too-large", "c") {
			t.Errorf("no source-too-large problem naming c: %v", problems)
		}
	})
	t.Run("MaxEntries", func(t *testing.T) {
		r := newRepo(t, Fixture(), repository.Options{MaxEntries: 5})
		_, problems, err := r.Skills(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !hasProblem(problems, r.Source(), "source-too-many-entries", "") {
			t.Errorf("no source-too-many-entries problem with max_entries 5: %v", problems)
		}
	})
	t.Run("Selection", func(t *testing.T) {
		files := Fixture()
		files["internal-tool/SKILL.md"] = File{Data: "---\nname: internal-tool\ndescription: For the repository's own use.\nmetadata:\n  internal: true\n---\n"}
		for _, tc := range []struct {
			name             string
			include, exclude []string
			want             []string
		}{
			{"All", nil, nil, []string{"deep", "docs", "lower", "pdf", "Warned"}},
			{"Include", []string{"pdf", "DOC*"}, nil, []string{"docs", "pdf"}},
			{"Exclude", nil, []string{"pdf", "w*"}, []string{"deep", "docs", "lower"}},
			{"ExcludeWins", []string{"pdf", "docs"}, []string{"pdf"}, []string{"docs"}},
			{"InternalNotByGlob", []string{"intern*", "lower"}, nil, []string{"lower"}},
			{"InternalByName", []string{"internal-tool"}, nil, []string{"internal-tool"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := newRepo(t, files, repository.Options{Include: tc.include, Exclude: tc.exclude})
				skills, problems, err := r.Skills(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if got := names(skills); !slices.Equal(got, tc.want) {
					t.Errorf("skills = %v, want %v", got, tc.want)
				}
				if tc.include != nil && slices.ContainsFunc(problems, func(p skill.Problem) bool { return p.Path == "broken" }) {
					t.Errorf("a skill left out by the selection still reports problems: %v", problems)
				}
			})
		}
		r := newRepo(t, files, repository.Options{Include: []string{"pdff"}})
		skills, problems, err := r.Skills(ctx)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(problems, func(p skill.Problem) bool { return p.Rule == "skill-not-found" })
		if len(skills) != 0 || i < 0 {
			t.Fatalf("skills: [pdff]: skills %v, problems %v", names(skills), problems)
		}
		if p := problems[i]; p.Level != skill.Warning || p.Source != r.Source() || !strings.Contains(p.Message, "nearest: pdf") {
			t.Errorf("the unknown name's problem %+v is not a warning naming the nearest name pdf", p)
		}
	})
}

// hasProblem reports whether problems hold one of rule naming source and,
// unless path is "", path.
func hasProblem(problems []skill.Problem, source, rule, path string) bool {
	return slices.ContainsFunc(problems, func(p skill.Problem) bool {
		return p.Source == source && p.Rule == rule && (path == "" || p.Path == path)
	})
}

func names(skills []skill.Skill) []string {
	var out []string
	for _, s := range skills {
		out = append(out, s.Name)
	}
	return out
}
