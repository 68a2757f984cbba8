package layering

import (
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
