package repository

import (
	"fmt"
	"strings"
)

// SourceName turns raw, a configured or derived name, into one path
// component of [a-z0-9._-]: letters are lower-cased, every other run of
// characters becomes "-", and a name that would be empty, "." or ".." (or
// start with a dot) gets a "source" prefix. The result can be used as a
// directory name in the cache.
func SourceName(raw string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(strings.TrimSpace(raw)) {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
		if !ok {
			if !dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = true
			continue
		}
		b.WriteRune(r)
		dash = false
	}
	name := strings.TrimRight(b.String(), "-")
	if name == "" || name[0] == '.' {
		name = "source" + name
	}
	if len(name) > 100 {
		name = name[:100]
	}
	return name
}

// UniqueNames makes names unique in order: the second of a name becomes
// NAME_2, the third NAME_3. It returns a warning for each rename.
func UniqueNames(names []string) ([]string, []string) {
	out := make([]string, len(names))
	seen := map[string]bool{}
	var warnings []string
	for i, n := range names {
		unique := n
		for k := 2; seen[unique]; k++ {
			unique = fmt.Sprintf("%s_%d", n, k)
		}
		if unique != n {
			warnings = append(warnings, fmt.Sprintf("two sources are named %q: the later one is renamed %q; set name: in the config to choose", n, unique))
		}
		seen[unique] = true
		out[i] = unique
	}
	return out, warnings
}

// RepoName derives a source name from a remote: "acme/skills.git" gives
// "skills". The credentials, the query and the fragment are left out
// first: a name is printed and written into the config.
func RepoName(remote string) string {
	s := StripCredentials(remote)
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimRight(s, "/")
	if i := strings.LastIndexAny(s, "/:"); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSuffix(s, ".git")
}
