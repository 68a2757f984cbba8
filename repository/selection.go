package repository

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/skillsync/skillsync/internal/editdistance"
	"github.com/skillsync/skillsync/skill"
)

// discoveryRules versions what discovery yields for a given tree (where
// it looks, what it skips, its limits' meaning, what parsing a SKILL.md
// gives). It is part of the fingerprint, so a source synced under older
// rules is read again: the cache's records answer Known and Recalled only
// under the rules that wrote them, so a change to parsing must move it.
const discoveryRules = 2

// Selects reports whether o's selection keeps s: its name matches no
// Exclude pattern and, when Include is set, some Include pattern. Patterns
// are path.Match globs ("pdf-*") compared without case, as skill names
// are. A skill whose frontmatter sets metadata.internal to true is kept
// only when Include names it exactly, never through a glob, which is the
// convention of npx skills. A skill without a name (its SKILL.md did not
// parse) is matched by its directory's name.
func (o Options) Selects(s skill.Skill) bool {
	name := selectionName(s)
	for _, p := range o.Exclude {
		if matchName(p, name) {
			return false
		}
	}
	if strings.EqualFold(s.Metadata["internal"], "true") {
		return slices.ContainsFunc(o.Include, func(p string) bool { return strings.EqualFold(p, name) })
	}
	return len(o.Include) == 0 || slices.ContainsFunc(o.Include, func(p string) bool { return matchName(p, name) })
}

// Select returns the skills o selects, in their order, and a warning for
// every Include pattern that matches none of them, naming the nearest
// names (see Unmatched).
func (o Options) Select(skills []skill.Skill) ([]skill.Skill, []skill.Problem) {
	var kept []skill.Skill
	names := make([]string, 0, len(skills))
	for _, s := range skills {
		names = append(names, selectionName(s))
		if o.Selects(s) {
			kept = append(kept, s)
		}
	}
	return kept, o.Unmatched(names)
}

// Unmatched returns a warning for every Include pattern that matches none
// of names (the skills a source has, selected or not), naming up to three
// of the nearest names so a typo is easy to fix.
func (o Options) Unmatched(names []string) []skill.Problem {
	var problems []skill.Problem
	for _, p := range o.Include {
		if slices.ContainsFunc(names, func(n string) bool { return matchName(p, n) }) {
			continue
		}
		msg := fmt.Sprintf("skills: %q matches no skill of this source", p)
		if near := nearest(p, names, 3); len(near) > 0 {
			msg += "; nearest: " + strings.Join(near, ", ")
		} else {
			msg += ", which has none"
		}
		problems = append(problems, skill.Problem{Level: skill.Warning, Rule: "skill-not-found", Path: ".", Message: msg})
	}
	return problems
}

// Validate reports the first Include or Exclude pattern that is not a
// valid path.Match glob, for the config loader to refuse.
func (o Options) Validate() error {
	for key, patterns := range map[string][]string{"skills": o.Include, "exclude": o.Exclude} {
		for _, p := range patterns {
			if _, err := path.Match(p, ""); err != nil || p == "" {
				return fmt.Errorf("%s: %q is not a skill name or a glob such as pdf-*", key, p)
			}
		}
	}
	for _, p := range o.Plugins {
		if strings.TrimSpace(p) == "" {
			return fmt.Errorf("plugins: a plugin name is empty")
		}
	}
	return nil
}

// Fingerprint is a stable string of every option that changes what a
// source yields (strict, the size and entry limits with their defaults
// applied, the selection in sorted order, the discovery rules), for the
// caller to keep in the source's record: a different fingerprint is a
// change even at the same revision. Timeout is left out: it decides
// whether discovery ends, not what it finds.
func (o Options) Fingerprint() string {
	fp := fmt.Sprintf("discovery=%d strict=%t max_file_size=%d max_skill_size=%d max_source_size=%d max_entries=%d skills=%s exclude=%s",
		discoveryRules, o.Strict, max(o.MaxFileSize, 0), o.SkillSizeLimit(), o.SourceSizeLimit(), o.EntryLimit(),
		patternList(o.Include), patternList(o.Exclude))
	if len(o.Plugins) > 0 {
		// Only when set, so that every source recorded before plugins:
		// existed keeps its fingerprint.
		fp += " plugins=" + patternList(o.Plugins)
	}
	return fp
}

// patternList is patterns lower-cased, sorted, without duplicates, each
// quoted: the same selection written in any order gives one string.
func patternList(patterns []string) string {
	out := make([]string, 0, len(patterns))
	for _, p := range patterns {
		out = append(out, strings.ToLower(p))
	}
	slices.Sort(out)
	out = slices.Compact(out)
	for i, p := range out {
		out[i] = strconv.Quote(p)
	}
	return "[" + strings.Join(out, ",") + "]"
}

func selectionName(s skill.Skill) string {
	if s.Name != "" {
		return s.Name
	}
	return path.Base(s.Path)
}

// matchName reports whether pattern matches name, without case. A pattern
// that is not a valid glob matches nothing.
func matchName(pattern, name string) bool {
	ok, err := path.Match(strings.ToLower(pattern), strings.ToLower(name))
	return ok && err == nil
}

// nearest returns up to n of names closest to target in edit distance,
// closest first, then alphabetically. Only the first 64 bytes of each are
// compared, which bounds the work whatever a source names its skills.
func nearest(target string, names []string, n int) []string {
	type scored struct {
		name string
		d    int
	}
	target = strings.ToLower(target[:min(len(target), 64)])
	var all []scored
	seen := map[string]bool{}
	for _, name := range names {
		lower := strings.ToLower(name)
		if seen[lower] {
			continue
		}
		seen[lower] = true
		all = append(all, scored{name, editdistance.Levenshtein(target, lower[:min(len(lower), 64)])})
	}
	slices.SortFunc(all, func(a, b scored) int { return cmp.Or(a.d-b.d, strings.Compare(a.name, b.name)) })
	var out []string
	for _, s := range all[:min(n, len(all))] {
		out = append(out, s.name)
	}
	return out
}
