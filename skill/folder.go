package skill

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// AgentFolderName reports whether name is what the Agent Skills
// specification allows for a skill's name, and so for its folder: 1 to
// 64 characters, no upper case, only letters, digits and hyphens, no
// hyphen at either end and never two in a row. The rules are the ones
// Load warns about (name-too-long, name-not-lowercase,
// name-invalid-chars, name-hyphen).
func AgentFolderName(name string) bool {
	if name == "" || utf8.RuneCountInString(name) > MaxNameLength || name != strings.ToLower(name) {
		return false
	}
	if strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") || strings.Contains(name, "--") {
		return false
	}
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' {
			return false
		}
	}
	return true
}

// FolderName is the folder a skill named name gets in a target before
// collisions are settled: name itself when AgentFolderName allows it,
// else name lower-cased, each run of characters other than letters and
// digits made one hyphen, hyphens trimmed from both ends, cut to 64
// characters ("Ahrefs Automation" gives "ahrefs-automation", "my_skill"
// gives "my-skill"). A name with no letter or digit at all gives "skill".
func FolderName(name string) string {
	if AgentFolderName(name) {
		return name
	}
	var b strings.Builder
	n, dash := 0, false
	for _, r := range strings.ToLower(name) {
		if n == MaxNameLength {
			break
		}
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			dash = b.Len() > 0
			continue
		}
		if dash {
			b.WriteByte('-')
			n++
			dash = false
			if n == MaxNameLength {
				break
			}
		}
		b.WriteRune(r)
		n++
	}
	out := strings.TrimRight(b.String(), "-")
	if out == "" {
		return "skill"
	}
	return out
}
