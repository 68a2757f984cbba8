package postgres_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/repository/postgres"
	"github.com/skillsync/skillsync/repository/repositorytest"
	"github.com/skillsync/skillsync/skill"
)

// pgRead returns skill/path of every file whose content a traced query
// asked for.
func pgRead(queries []pgx.TraceQueryStartData) []string {
	var out []string
	for _, q := range queries {
		if !strings.Contains(q.SQL, "f.content") && !strings.Contains(q.SQL, "substring(") {
			continue
		}
		if entries, ok := q.Args[0].([]string); ok {
			paths := q.Args[1].([]string)
			for i := range entries {
				out = append(out, entries[i]+"/"+paths[i])
			}
			continue
		}
		out = append(out, q.Args[0].(string)+"/"+q.Args[1].(string))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestPostgresLimitsBeforeDownload: max_skill_size, max_source_size and
// the selection rule skills out from the sizes the database lists, before
// their files are read; the problems and the skills kept are what
// discovery says on any adapter.
func TestPostgresLimitsBeforeDownload(t *testing.T) {
	t.Parallel()
	tracer := &pgTracer{}
	opts := repository.Options{MaxSkillSize: 1000, MaxSourceSize: 1500, Exclude: []string{"e-*"}}
	s := newPostgres(t, opts, func(c *postgres.PostgresConfig) { c.Tracer = tracer })
	skillMD := func(name, desc string) repositorytest.File {
		return repositorytest.File{Data: "---\nname: " + name + "\ndescription: " + desc + "\n---\n"}
	}
	s.loadRaw(t, map[string]repositorytest.File{
		// Not valid, so it counts toward no cap and its file is not read.
		"0-broken/SKILL.md":   {Data: "---\nname: 0-broken\n---\n"},
		"0-broken/data.bin":   {Data: strings.Repeat("x", 900)},
		"a-small/SKILL.md":    skillMD("a-small", "Small."),
		"a-small/data.bin":    {Data: strings.Repeat("a", 200)},
		"b-big/SKILL.md":      skillMD("b-big", "Over max_skill_size."),
		"b-big/data.bin":      {Data: strings.Repeat("b", 2000)},
		"c-mid/SKILL.md":      skillMD("c-mid", "Fits the source."),
		"c-mid/data.bin":      {Data: strings.Repeat("c", 900)},
		"d-mid/SKILL.md":      skillMD("d-mid", "Past max_source_size."),
		"d-mid/data.bin":      {Data: strings.Repeat("d", 900)},
		"e-excluded/SKILL.md": skillMD("e-excluded", "Left out by exclude:."),
		"e-excluded/data.bin": {Data: strings.Repeat("e", 5000)},
	})
	tracer.take()
	skills, problems := pgSkills(t, s)
	names := skillNames(skills)
	if !slices.Equal(names, []string{"a-small", "c-mid"}) {
		t.Errorf("kept %v, want a-small and c-mid", names)
	}
	if got := pgContents(t, skills); len(got["c-mid/data.bin"]) != 900 || len(got["a-small/data.bin"]) != 200 {
		t.Errorf("the kept skills' files did not come back whole")
	}
	for rule, file := range map[string]string{"skill-too-large": "b-big", "source-too-large": "d-mid", "description-missing": "0-broken/SKILL.md"} {
		if !pgHasProblem(problems, rule, file) {
			t.Errorf("no %s problem for %s: %v", rule, file, problems)
		}
	}
	for _, p := range problems {
		if strings.Contains(p.Path, "e-excluded") {
			t.Errorf("a skill exclude: leaves out was reported: %v", p)
		}
	}
	read := pgRead(tracer.take())
	want := []string{"0-broken/SKILL.md", "a-small/SKILL.md", "a-small/data.bin", "b-big/SKILL.md", "c-mid/SKILL.md", "c-mid/data.bin", "d-mid/SKILL.md", "e-excluded/SKILL.md"}
	if !slices.Equal(read, want) {
		t.Errorf("contents read:\n %v\nwant only the SKILL.md files and the kept skills' files:\n %v", read, want)
	}

	// The same source read again, as Skills does on every sync, keeps the
	// same skills.
	again, _ := pgSkills(t, s)
	if len(again) != 2 {
		t.Errorf("a second read kept %d skills", len(again))
	}
}

// TestPostgresMaxEntries: the listing stops after max_entries files, so
// what a source holds in memory is bounded however many rows its tables
// have; the skill it cut into and every one after it are left out with a
// problem and none of their contents is read. (Discovery's own budget
// counts every directory entry it reads, a skill's listing included, so
// it stops earlier still and says so too.)
func TestPostgresMaxEntries(t *testing.T) {
	t.Parallel()
	tracer := &pgTracer{}
	s := newPostgres(t, repository.Options{MaxEntries: 5}, func(c *postgres.PostgresConfig) { c.Tracer = tracer })
	files := map[string]repositorytest.File{}
	for _, name := range []string{"a", "b", "c"} {
		files[name+"/SKILL.md"] = repositorytest.File{Data: "---\nname: " + name + "\ndescription: Skill " + name + ".\n---\n"}
		files[name+"/one.txt"] = repositorytest.File{Data: "1"}
		files[name+"/two.txt"] = repositorytest.File{Data: "2"}
	}
	s.loadRaw(t, files)
	tracer.take()
	_, problems := pgSkills(t, s)
	if !slices.ContainsFunc(problems, func(p skill.Problem) bool {
		return p.Rule == "source-too-many-entries" && p.Path == "b" && p.Level == skill.Error && strings.Contains(p.Message, "listing stopped in b")
	}) {
		t.Errorf("no source-too-many-entries problem naming b: %v", problems)
	}
	for _, f := range pgRead(tracer.take()) {
		if !strings.HasPrefix(f, "a/") {
			t.Errorf("%s was read, past the listing's end", f)
		}
	}

	// Within the limit the same source is read whole.
	tracer.take()
	whole := pgOpen(t, s.cluster, s.cfg, repository.Options{})
	if skills, problems := pgSkills(t, whole); len(skills) != 3 || len(problems) != 0 {
		t.Errorf("without the limit: %d skills, problems %v", len(skills), problems)
	}
}
