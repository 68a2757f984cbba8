package skill

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/skillsync/skillsync/internal/termtext"
)

// MaxNameLength is the longest name the Agent Skills specification allows,
// in characters.
const MaxNameLength = 64

// ValidName reports whether name can be used as one path component on every
// platform skillsync writes to, and printed as it is: not empty, at most 255
// bytes of valid UTF-8, no "/" or "\", not starting with ".", and no
// control or format character (termtext.Unsafe: NUL, ESC, newline, the C1
// controls, the bidirectional controls, ...). A name that fails is an
// error, since the cache and the targets use it as a directory name and
// every listing shows it. ValidName does not check the stricter Agent
// Skills rules; Load reports those as warnings.
func ValidName(name string) bool {
	if name == "" || len(name) > 255 || name[0] == '.' {
		return false
	}
	// Byte by byte while the name is ASCII, as nearly every name is: a
	// catalog checks each of thousands of names more than once.
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= utf8.RuneSelf {
			rest := name[i:]
			return utf8.ValidString(rest) && !strings.ContainsAny(rest, "/\\") && unsafeRune(rest) < 0
		}
		if c == '/' || c == '\\' || termtext.Unsafe(rune(c)) {
			return false
		}
	}
	return true
}

// unsafeRune returns the first character of name that termtext.Unsafe
// reports, or -1.
func unsafeRune(name string) rune {
	for _, r := range name {
		if termtext.Unsafe(r) {
			return r
		}
	}
	return -1
}

// nameError returns the error that makes a non-empty name unusable, or nil.
func nameError(name string) *Problem {
	if r := unsafeRune(name); r >= 0 {
		return &Problem{Level: Error, Rule: "name-control-char", Message: fmt.Sprintf(
			"name %q holds the control or formatting character %U, which a terminal would act on or a reader would not see; use only letters, digits and hyphens",
			name, r)}
	}
	if !ValidName(name) {
		return &Problem{Level: Error, Rule: "name-unsafe", Message: fmt.Sprintf(
			"name %q cannot be a directory name: no / or \\, no leading dot, valid UTF-8, at most 255 bytes", name)}
	}
	return nil
}

// NormalizeName returns name in Unicode NFKC form with surrounding space
// removed, the form names are compared and stored in.
func NormalizeName(name string) string {
	return norm.NFKC.String(strings.TrimSpace(name))
}

// nameWarnings checks name against the Agent Skills naming rules.
func nameWarnings(name, dirName string) []Problem {
	var out []Problem
	warn := func(rule, msg string) {
		out = append(out, Problem{Level: Warning, Rule: rule, Message: msg})
	}
	if n := utf8.RuneCountInString(name); n > MaxNameLength {
		warn("name-too-long", "name is "+strconv.Itoa(n)+" characters long; the limit is 64")
	}
	// The name to suggest is one that breaks none of these rules.
	fixed := strconv.Quote(FolderName(name))
	if name != strings.ToLower(name) {
		warn("name-not-lowercase", "name "+strconv.Quote(name)+" has upper-case letters; use "+fixed)
	}
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' {
			warn("name-invalid-chars", "name "+strconv.Quote(name)+" has "+strconv.Quote(string(r))+"; use only letters, digits and hyphens, such as "+fixed)
			break
		}
	}
	if strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") || strings.Contains(name, "--") {
		warn("name-hyphen", "name "+strconv.Quote(name)+" starts or ends with a hyphen or has two in a row")
	}
	if dirName != "" && NormalizeName(dirName) != name {
		warn("name-mismatch", "name "+strconv.Quote(name)+" differs from its directory "+strconv.Quote(dirName)+"; rename one to match")
	}
	return out
}
