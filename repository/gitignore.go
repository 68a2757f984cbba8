package repository

import (
	"bytes"
	"path"
	"strings"
)

// ignoreRule is one pattern line of an ignore file, as gitignore(5)
// reads it. Rules are judged one path component at a time while the
// walk goes down (IgnoreFS), as git judges them: a folder a rule leaves
// out is not entered, so nothing below it can be taken back by a later
// "!" line. That is why the matching is done here rather than by go-git's
// gitignore.Matcher, which lets a rule match a path through any of its
// parents: there `.env` then `!config/` keeps config/.env, which git
// ignores, and a file git would not commit would reach the cache.
type ignoreRule struct {
	depth    int      // components of the rule's folder below the work tree's root
	parts    []string // the pattern split at "/"; one part for a name pattern
	anchored bool     // held a "/" before its end: matched below its folder, not by name
	negate   bool
	dirOnly  bool
}

// parseIgnore reads the rules of an ignore file in the folder depth
// components below the work tree's root, in the file's order.
func parseIgnore(data []byte, depth int) []ignoreRule {
	var rules []ignoreRule
	// Git skips a byte order mark before the first rule; kept, it made
	// that rule match nothing.
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	for line := range strings.SplitSeq(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		// Trailing spaces go unless a backslash keeps the last one.
		for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, "\\ ") {
			line = line[:len(line)-1]
		}
		if line == "" || line[0] == '#' {
			continue
		}
		r := ignoreRule{depth: depth}
		if line[0] == '!' {
			r.negate, line = true, line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimSuffix(line, "/")
		}
		r.anchored = strings.Contains(line, "/")
		line = strings.TrimPrefix(line, "/")
		if line == "" {
			continue
		}
		// git's wildmatch spells a negated class [!...]; path.Match
		// reads only [^...].
		line = strings.ReplaceAll(line, "[!", "[^")
		for part := range strings.SplitSeq(line, "/") {
			if part == "**" && len(r.parts) > 0 && r.parts[len(r.parts)-1] == "**" {
				continue // "**/**" is "**", and a run of them would cost more to match
			}
			r.parts = append(r.parts, part)
		}
		rules = append(rules, r)
	}
	return rules
}

// match reports whether r matches the path full (components from the
// work tree's root), a directory when isDir.
func (r *ignoreRule) match(full []string, isDir bool) bool {
	if r.dirOnly && !isDir || len(full) <= r.depth {
		return false
	}
	rel := full[r.depth:]
	if !r.anchored {
		return matchPart(r.parts[0], rel[len(rel)-1])
	}
	return matchParts(r.parts, rel)
}

// matchParts matches a pattern's components against a path's, "**"
// standing for any number of them (at the end, at least one: "foo/**"
// is what is inside foo, not foo). It keeps one row of reachable
// positions per pattern component, so a pattern of many "**" costs its
// length times the path's, never more.
func matchParts(pat, name []string) bool {
	reach := make([]bool, len(name)+1)
	next := make([]bool, len(name)+1)
	reach[0] = true
	for i, p := range pat {
		clear(next)
		if p == "**" {
			last := i == len(pat)-1
			run := false
			for j := range reach {
				if last && run || !last && (run || reach[j]) {
					next[j] = true
				}
				run = run || reach[j]
			}
		} else {
			for j := range name {
				if reach[j] && matchPart(p, name[j]) {
					next[j+1] = true
				}
			}
		}
		reach, next = next, reach
	}
	return reach[len(name)]
}

// matchPart matches one component. A pattern path.Match cannot read (a
// class such as [[:alpha:]]) matches nothing: the file is kept, as it is
// without the rule.
func matchPart(pattern, name string) bool {
	if !strings.ContainsAny(pattern, `*?[\`) {
		return pattern == name
	}
	ok, err := path.Match(pattern, name)
	return ok && err == nil
}

// ignored reports whether the last rule in rules that matches full
// leaves it out.
func ignored(rules []ignoreRule, full []string, isDir bool) bool {
	for i := len(rules) - 1; i >= 0; i-- {
		if rules[i].match(full, isDir) {
			return !rules[i].negate
		}
	}
	return false
}
