package layering

import (
	"sort"
	"strings"
)

// Nearest returns up to n names of winners that look like name: those
// containing it, or within a small edit distance, closest first.
func Nearest(winners []*Winner, name string, n int) []string {
	key := Key(name)
	type cand struct {
		name string
		dist int
	}
	var cands []cand
	for _, w := range winners {
		k := Key(w.Skill.Name)
		d := distance(key, k)
		if strings.Contains(k, key) || strings.Contains(key, k) {
			d = min(d, 1)
		}
		if d <= max(2, len(key)/3) {
			cands = append(cands, cand{w.Skill.Name, d})
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].dist != cands[j].dist {
			return cands[i].dist < cands[j].dist
		}
		return cands[i].name < cands[j].name
	})
	var out []string
	for i := 0; i < len(cands) && i < n; i++ {
		out = append(out, cands[i].name)
	}
	return out
}

// distance is the Levenshtein distance between a and b, in runes.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
