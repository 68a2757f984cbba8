package layering

import (
	"fmt"
	"slices"
	"strings"

	"github.com/skillsync/skillsync/skill"
)

// Dedupe keeps one skill per case-insensitive name (Key), the first by
// path, as the catalog does: two cache directories differing only by case
// would collide on some file systems. It returns the ones it dropped too.
func Dedupe(skills []skill.Skill) (kept, dropped []skill.Skill) {
	// Sorted by index: a skill is hundreds of bytes, and sources mostly
	// come in path order already.
	order := make([]int, len(skills))
	for i := range order {
		order[i] = i
	}
	if !slices.IsSortedFunc(skills, func(a, b skill.Skill) int { return strings.Compare(a.Path, b.Path) }) {
		slices.SortStableFunc(order, func(i, j int) int { return strings.Compare(skills[i].Path, skills[j].Path) })
	}
	kept = make([]skill.Skill, 0, len(skills))
	seen := make(map[string]bool, len(skills))
	for _, i := range order {
		if k := Key(skills[i].Name); !seen[k] {
			seen[k] = true
			kept = append(kept, skills[i])
		} else {
			dropped = append(dropped, skills[i])
		}
	}
	return kept, dropped
}

// DuplicateProblems are the warnings of dups, skills that source has
// again at a path sorting after the one that wins (Dedupe's dropped).
func DuplicateProblems(source string, dups []skill.Skill) []skill.Problem {
	var out []skill.Problem
	for _, d := range dups {
		out = append(out, skill.Problem{Source: source, Skill: d.Name, Path: d.Path, Level: skill.Warning, Rule: "duplicate-name",
			Message: fmt.Sprintf("skill %s is also at another path of source %s, which sorts first and wins", d.Name, source)})
	}
	return out
}
