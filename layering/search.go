package layering

import (
	"regexp"
	"sort"
	"strings"
	"sync"
)

// DefaultLimit is how many results Search returns when asked for none in
// particular.
const DefaultLimit = 25

// Result is one search hit.
type Result struct {
	Winner *Winner
	Score  int
}

var token = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[a-z0-9][a-z0-9_-]*`) })

// query is a search query broken into the parts the scoring looks at.
type query struct {
	q         string
	terms     []string // tokens of 4+ characters or holding a digit
	longTerms []string // tokens of 6+ characters or holding a digit
}

func parseQuery(raw string) query {
	q := query{q: strings.ToLower(strings.TrimSpace(raw))}
	for _, t := range token().FindAllString(q.q, -1) {
		digit := strings.ContainsAny(t, "0123456789")
		if len(t) >= 4 || digit {
			q.terms = append(q.terms, t)
		}
		if len(t) >= 6 || digit {
			q.longTerms = append(q.longTerms, t)
		}
	}
	return q
}

// Search ranks winners against raw: lexical matching over name,
// description, tags and triggers. Results are sorted by score, highest
// first, then by name; a score of 0 is no result. limit <= 0 means
// DefaultLimit. To search the same winners many times, make an Index once.
func Search(winners []*Winner, raw string, limit int) []Result {
	return NewIndex(winners).Search(raw, limit)
}

// Index holds the lower-cased text of a set of winners with a trigram
// index per field, so a query reads the posting list of one trigram of
// each pattern and checks only the winners on it, instead of scanning all
// of the text.
type Index struct {
	winners                         []*Winner
	names, descriptions, tags, trig *trigrams
	// triggers maps every trigger to its winners, for the one rule that
	// looks the other way: a trigger inside the query. Looking up each
	// substring of a short query costs less than a scan of every trigger.
	triggers map[string][]int
}

// maxSubstringQuery is the longest query whose substrings are looked up
// one by one; a longer one is checked against every trigger.
const maxSubstringQuery = 64

// trigrams maps each three-byte sequence of a field to the winners whose
// text holds it, in order.
type trigrams struct {
	texts []string
	post  map[uint32][]int32
}

func trigram(s string, i int) uint32 {
	return uint32(s[i])<<16 | uint32(s[i+1])<<8 | uint32(s[i+2])
}

func newTrigrams(winners []*Winner, field func(*searchText) string) *trigrams {
	t := &trigrams{texts: make([]string, len(winners)), post: map[uint32][]int32{}}
	for i, w := range winners {
		text := field(w.text())
		t.texts[i] = text
		for j := 0; j+3 <= len(text); j++ {
			g := trigram(text, j)
			list := t.post[g]
			if n := len(list); n == 0 || list[n-1] != int32(i) {
				t.post[g] = append(list, int32(i))
			}
		}
	}
	return t
}

// find calls hit with every winner whose text holds pattern.
func (t *trigrams) find(pattern string, hit func(int)) {
	if pattern == "" {
		return
	}
	if len(pattern) < 3 {
		for i, text := range t.texts {
			if strings.Contains(text, pattern) {
				hit(i)
			}
		}
		return
	}
	var best []int32
	for j := 0; j+3 <= len(pattern); j++ {
		list, ok := t.post[trigram(pattern, j)]
		if !ok {
			return
		}
		if best == nil || len(list) < len(best) {
			best = list
		}
	}
	for _, i := range best {
		if strings.Contains(t.texts[i], pattern) {
			hit(int(i))
		}
	}
}

// NewIndex indexes winners for searching.
func NewIndex(winners []*Winner) *Index {
	ix := &Index{
		winners:      winners,
		names:        newTrigrams(winners, func(t *searchText) string { return t.name }),
		descriptions: newTrigrams(winners, func(t *searchText) string { return t.description }),
		tags:         newTrigrams(winners, func(t *searchText) string { return strings.Join(t.tags, "\x00") }),
		trig:         newTrigrams(winners, func(t *searchText) string { return strings.Join(t.triggers, "\x00") }),
	}
	ix.triggers = map[string][]int{}
	for i, w := range winners {
		for _, t := range w.text().triggers {
			ix.triggers[t] = append(ix.triggers[t], i)
		}
	}
	return ix
}

// triggersIn marks the winners with a trigger inside q.
func (ix *Index) triggersIn(q string, mark func(int)) {
	if len(q) > maxSubstringQuery {
		for t, ws := range ix.triggers {
			if strings.Contains(q, t) {
				for _, i := range ws {
					mark(i)
				}
			}
		}
		return
	}
	for a := 0; a < len(q); a++ {
		for b := a + 1; b <= len(q); b++ {
			for _, i := range ix.triggers[q[a:b]] {
				mark(i)
			}
		}
	}
}

// Search ranks the indexed winners; see the package function Search.
func (ix *Index) Search(raw string, limit int) []Result {
	if limit <= 0 {
		limit = DefaultLimit
	}
	q := parseQuery(strings.ReplaceAll(raw, "\x00", ""))
	if q.q == "" {
		return nil
	}
	// Every rule needs the query or one of its terms inside a field, or a
	// trigger inside the query: only winners that pass are scored.
	seen := make([]bool, len(ix.winners))
	var candidates []int
	mark := func(i int) {
		if !seen[i] {
			seen[i] = true
			candidates = append(candidates, i)
		}
	}
	ix.names.find(q.q, mark)
	ix.descriptions.find(q.q, mark)
	ix.tags.find(q.q, mark)
	ix.trig.find(q.q, mark)
	for _, term := range q.terms {
		ix.names.find(term, mark)
	}
	for _, term := range q.longTerms {
		ix.tags.find(term, mark)
		ix.trig.find(term, mark)
	}
	ix.triggersIn(q.q, mark)
	var out []Result
	for _, i := range candidates {
		if s := q.score(ix.winners[i]); s > 0 {
			out = append(out, Result{Winner: ix.winners[i], Score: s})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		// Names are NFKC already: lower case is the whole catalog key.
		return out[i].Winner.text().name < out[j].Winner.text().name
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// searchText is a skill's text in lower case, as search compares it.
type searchText struct {
	name, description string
	tags, triggers    []string
}

// text lowers a winner's text once; a catalog is searched many times.
// Claude Code's when_to_use counts as part of the description, as Claude
// Code lists the two together.
func (w *Winner) text() *searchText {
	w.lowerOnce.Do(func() {
		description := w.Skill.Description
		if more := w.Skill.WhenToUse(); more != "" && more != description {
			description += "\n" + more
		}
		w.lower = &searchText{
			name:        strings.ToLower(w.Skill.Name),
			description: strings.ToLower(description),
			tags:        lowerAll(w.Skill.Tags),
			triggers:    lowerAll(w.Skill.Triggers),
		}
	})
	return w.lower
}

// score adds up the rules below. Words of the description alone never
// match: only the whole query inside the description counts, so a common
// word cannot pull in every skill.
func (q query) score(w *Winner) int {
	t := w.text()
	name, tags, triggers := t.name, t.tags, t.triggers
	score := 0
	if q.q == name {
		score += 10
	}
	if contains(triggers, func(t string) bool { return t == q.q }) {
		score += 9
	}
	if strings.Contains(name, q.q) {
		score += 6
	}
	if strings.Contains(t.description, q.q) {
		score += 4
	}
	if contains(tags, func(t string) bool { return strings.Contains(t, q.q) }) {
		score += 3
	}
	if contains(triggers, func(t string) bool { return strings.Contains(t, q.q) || strings.Contains(q.q, t) }) {
		score += 8
	}
	for _, term := range q.terms {
		if strings.Contains(name, term) {
			score += 3
		}
	}
	for _, term := range q.longTerms {
		if contains(tags, func(t string) bool { return strings.Contains(t, term) }) {
			score++
		}
		if contains(triggers, func(t string) bool { return strings.Contains(t, term) }) {
			score += 4
		}
	}
	return score
}

func lowerAll(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = strings.ToLower(s)
	}
	return out
}

func contains(list []string, match func(string) bool) bool {
	for _, s := range list {
		if match(s) {
			return true
		}
	}
	return false
}
