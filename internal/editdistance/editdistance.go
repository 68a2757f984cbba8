// Package editdistance measures how far apart two names are, for the
// "did you mean" suggestions of the catalog and of a source's selection.
package editdistance

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
