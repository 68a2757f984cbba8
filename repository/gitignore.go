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
	// Where the rule is written, for a message that says why a folder
	// the user named is one git ignores.
	file string
	line int
	text string
}

// parseIgnore reads the rules of an ignore file, file, in the folder
// depth components below the work tree's root, in the file's order.
func parseIgnore(data []byte, depth int, file string) []ignoreRule {
	var rules []ignoreRule
	// Git skips a byte order mark before the first rule; kept, it made
	// that rule match nothing.
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	n := 0
	for line := range strings.SplitSeq(string(data), "\n") {
		n++
		line = strings.TrimSuffix(line, "\r")
		// Trailing spaces go unless a backslash keeps the last one.
		for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, "\\ ") {
			line = line[:len(line)-1]
		}
		if line == "" || line[0] == '#' {
			continue
		}
		r := ignoreRule{depth: depth, file: file, line: n, text: line}
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
		line = posixClasses(strings.ReplaceAll(line, "[!", "[^"))
		for _, part := range patternParts(line) {
			if part == "**" && len(r.parts) > 0 && r.parts[len(r.parts)-1] == "**" {
				continue // "**/**" is "**", and a run of them would cost more to match
			}
			r.parts = append(r.parts, part)
		}
		rules = append(rules, r)
	}
	return rules
}

// patternParts splits a pattern at its slashes. An escaped slash (\/)
// is one too, as git's wildmatch reads it: split inside a component, it
// left "docs\" that path.Match cannot read, and the rule matched
// nothing. A backslash before any other character stays with it.
func patternParts(p string) []string {
	var parts []string
	start := 0
	for i := 0; i < len(p); i++ {
		switch {
		case p[i] == '\\' && i+1 < len(p) && p[i+1] != '/':
			i++ // the escaped character, which is no separator
		case p[i] == '\\' && i+1 < len(p):
			parts = append(parts, p[start:i])
			i++
			start = i + 1
		case p[i] == '/':
			parts = append(parts, p[start:i])
			start = i + 1
		}
	}
	return append(parts, p[start:])
}

// classRange spells git's POSIX class name as a path.Match range.
func classRange(name string) (string, bool) {
	switch name {
	case "alnum":
		return "a-zA-Z0-9", true
	case "alpha":
		return "a-zA-Z", true
	case "blank":
		return " \t", true
	case "cntrl":
		return "\x00-\x1f\x7f", true
	case "digit":
		return "0-9", true
	case "graph":
		return "!-~", true
	case "lower":
		return "a-z", true
	case "print":
		return " -~", true
	case "punct":
		return "!-/:-@\\[-`{-~", true
	case "space":
		return " \t\n\v\f\r", true
	case "upper":
		return "A-Z", true
	case "xdigit":
		return "0-9A-Fa-f", true
	}
	return "", false
}

// posixClasses rewrites the POSIX classes inside the bracket expressions
// of pattern ([[:digit:]]) as the ranges path.Match reads: left as they
// were, a rule such as [[:digit:]]*.key matched nothing, and the files
// git ignores by it were copied and published. An unknown class is left
// as it is (the rule matches nothing, as before).
func posixClasses(pattern string) string {
	if !strings.Contains(pattern, "[:") {
		return pattern
	}
	var b strings.Builder
	in := false
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c == '\\' && i+1 < len(pattern) {
			b.WriteString(pattern[i : i+2])
			i++
			continue
		}
		if !in && c == '[' {
			in = true
			b.WriteByte(c)
			// A ']' first in the expression (after a '^') is one of
			// its characters, not its end.
			if i+1 < len(pattern) && pattern[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(pattern) && pattern[i+1] == ']' {
				b.WriteByte(']')
				i++
			}
			continue
		}
		if in && c == ']' {
			in = false
		}
		if in && strings.HasPrefix(pattern[i:], "[:") {
			if end := strings.Index(pattern[i+2:], ":]"); end >= 0 {
				if r, ok := classRange(pattern[i+2 : i+2+end]); ok {
					b.WriteString(r)
					i += end + 3
					continue
				}
			}
		}
		b.WriteByte(c)
	}
	return b.String()
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

// matchPart matches one component. A pattern path.Match cannot read (an
// unknown class such as [[:word:]]) matches nothing: the file is kept, as it is
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
	r := deciding(rules, full, isDir)
	return r != nil && !r.negate
}

// deciding returns the last rule in rules that matches full, which
// decides whether git ignores it, or nil.
func deciding(rules []ignoreRule, full []string, isDir bool) *ignoreRule {
	for i := len(rules) - 1; i >= 0; i-- {
		if rules[i].match(full, isDir) {
			return &rules[i]
		}
	}
	return nil
}
