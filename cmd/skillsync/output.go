package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"unicode"

	"github.com/skillsync/skillsync/skill"
)

// writeJSON prints v indented, with a final newline. Slices are sorted by
// their producers and map keys by encoding/json, so the same state always
// prints the same bytes.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// reportProblems writes catalog problems to stderr, one a line in the
// form SOURCE:FILE:LINE: LEVEL: MESSAGE (RULE). They never make a
// read-only command fail: a skill with an error is skipped, the rest work.
func (a *app) reportProblems(problems []skill.Problem) {
	if a.quiet {
		return
	}
	for _, p := range problems {
		fmt.Fprintln(a.stderr, safe(p.String()))
	}
}

// safe makes text that came from a source fit to print on a terminal:
// control and bidirectional-formatting characters are shown escaped, so a
// skill cannot clear the screen, fake rows or reorder what is shown.
func safe(s string) string {
	if strings.IndexFunc(s, unsafeRune) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unsafeRune(r) {
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}

// orEmpty keeps JSON arrays from printing as null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func shortRev(rev string) string {
	switch {
	case rev == "":
		return "-"
	case len(rev) > 12:
		return rev[:12]
	}
	return rev
}

func bytesString(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// syscallNoFollow makes an open fail on a symbolic link: skillsync never
// writes through a link it did not make.
const syscallNoFollow = syscall.O_NOFOLLOW
