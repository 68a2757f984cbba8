package layering

import (
	"regexp"
	"sort"
	"strings"
)

// DefaultLimit is how many results Search returns when asked for none in
// particular.
const DefaultLimit = 25

// Result is one search hit.
type Result struct {
	Winner *Winner
	Score  int
}

var token = regexp.MustCompile(`[a-z0-9][a-z0-9_-]*`)

// query is a search query broken into the parts the scoring looks at.
type query struct {
	q         string
	terms     []string // tokens of 4+ characters or holding a digit
	longTerms []string // tokens of 6+ characters or holding a digit
}

func parseQuery(raw string) query {
	q := query{q: strings.ToLower(strings.TrimSpace(raw))}
	for _, t := range token.FindAllString(q.q, -1) {
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
// DefaultLimit.
func Search(winners []*Winner, raw string, limit int) []Result {
	if limit <= 0 {
		limit = DefaultLimit
	}
	q := parseQuery(raw)
	if q.q == "" {
		return nil
	}
	var out []Result
	for _, w := range winners {
		if s := q.score(w); s > 0 {
			out = append(out, Result{Winner: w, Score: s})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return Key(out[i].Winner.Skill.Name) < Key(out[j].Winner.Skill.Name)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// score adds up the rules below. Words of the description alone never
// match: only the whole query inside the description counts, so a common
// word cannot pull in every skill.
func (q query) score(w *Winner) int {
	s := &w.Skill
	name := strings.ToLower(s.Name)
	tags := lowerAll(s.Tags)
	triggers := lowerAll(s.Triggers)
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
	if strings.Contains(strings.ToLower(s.Description), q.q) {
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
