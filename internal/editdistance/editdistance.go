// Package editdistance measures how far apart two names are, for the
// "did you mean" suggestions of the catalog and of a source's selection.
package editdistance

import (
	"sort"
	"strings"
)

// Levenshtein returns the number of single-rune insertions, deletions and
// substitutions that turn a into b. It compares runes, not bytes, so a
// name with an accented letter is one edit from its unaccented spelling.
// The work is len(a)×len(b): callers bound the names they compare.
func Levenshtein(a, b string) int {
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

// maxNearest bounds the names Nearest looks for: no name worth a "did
// you mean" is longer, and the distance to each candidate costs its
// length times theirs (a 1 MB name sent to the MCP server held a core
// for 25 s).
const maxNearest = 256

// Nearest returns up to n of names that look like name once both are put
// through fold: those containing it or contained in it, or within a third
// of its length (and two) in edits, closest first, ties by name.
func Nearest(names []string, name string, n int, fold func(string) string) []string {
	if len(name) > maxNearest {
		return nil
	}
	key := fold(name)
	type cand struct {
		name string
		dist int
	}
	var cands []cand
	for _, have := range names {
		k := fold(have)
		d := Levenshtein(key, k)
		if strings.Contains(k, key) || strings.Contains(key, k) {
			d = min(d, 1)
		}
		if d <= max(2, len(key)/3) {
			cands = append(cands, cand{have, d})
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
