package layering

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/skill"
)

// benchWords make varied descriptions, as a real marketplace has.
var benchWords = strings.Fields(`extract tables pdf release notes deploy service cluster review
pull request changelog migrate database schema test flaky retry docker image build cache
lint format commit message incident postmortem dashboard metrics alert oncall rotate secret
terraform plan apply kubernetes helm chart upgrade python package publish npm audit license`)

// benchCatalog is 10,000 skills across two layers, half of them shadowed,
// with seeded, varied descriptions, tags and triggers.
func benchCatalog() *Catalog {
	rng := rand.New(rand.NewPCG(7, 7))
	phrase := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = benchWords[rng.IntN(len(benchWords))]
		}
		return strings.Join(w, " ")
	}
	var market, ws []skill.Skill
	for i := 0; i < 10000; i++ {
		s := skill.Skill{
			Name:        fmt.Sprintf("%s-%05d", benchWords[rng.IntN(len(benchWords))], i),
			Description: fmt.Sprintf("%s. Use when %s.", phrase(8), phrase(6)),
			Tags:        []string{benchWords[rng.IntN(len(benchWords))], benchWords[rng.IntN(len(benchWords))]},
			Triggers:    []string{phrase(2)},
			Path:        fmt.Sprintf("s-%05d", i),
			File:        "SKILL.md",
		}
		market = append(market, s)
		if i%2 == 0 {
			ws = append(ws, s)
		}
	}
	dir := func(s skill.Skill) string { return "/cache/" + s.Path }
	return Build([]Input{{Layer: Marketplace, Source: "m", Skills: market, Dir: dir}, {Layer: Workspace, Source: "w", Skills: ws, Dir: dir}}, Options{})
}

func BenchmarkBuild(b *testing.B) {
	c := benchCatalog()
	inputs := []Input{{Layer: Marketplace, Source: "m"}}
	for _, w := range c.Winners {
		inputs[0].Skills = append(inputs[0].Skills, w.Skill)
	}
	b.ResetTimer()
	for b.Loop() {
		Build(inputs, Options{})
	}
}

// BenchmarkSearch is one query against an index made once, as a
// long-lived process (an agent's host, the daemon) searches.
func BenchmarkSearch(b *testing.B) {
	ix := NewIndex(benchCatalog().Visible())
	b.ResetTimer()
	for b.Loop() {
		if len(ix.Search("release notes", DefaultLimit)) == 0 {
			b.Fatal("no results")
		}
	}
}

// BenchmarkSearchCold includes making the index, as one skillsync search
// command does.
func BenchmarkSearchCold(b *testing.B) {
	ws := benchCatalog().Visible()
	b.ResetTimer()
	for b.Loop() {
		if len(Search(ws, "release notes", DefaultLimit)) == 0 {
			b.Fatal("no results")
		}
	}
}

func BenchmarkPrompt(b *testing.B) {
	ws := PromptSkills(benchCatalog().Winners)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Prompt(ws, PromptXML, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// The index must find exactly what scoring every winner finds.
func TestIndexMatchesBruteForce(t *testing.T) {
	t.Parallel()
	ws := benchCatalog().Visible()
	ix := NewIndex(ws)
	for _, raw := range []string{"release notes", "pdf", "go", "deploy service cluster", "k8", "use when", "helm chart upgrade now", "x", "tables pdf-forms", "  Release NOTES  "} {
		q := parseQuery(raw)
		want := 0
		for _, w := range ws {
			if q.score(w) > 0 {
				want++
			}
		}
		got := ix.Search(raw, len(ws))
		if len(got) != want {
			t.Errorf("%q: index found %d, brute force %d", raw, len(got), want)
		}
		for i := 1; i < len(got); i++ {
			if got[i-1].Score < got[i].Score {
				t.Fatalf("%q: results out of order", raw)
			}
		}
	}
}
