package main

import (
	"encoding/json"
	"fmt"
	"io"

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
		fmt.Fprintln(a.stderr, p)
	}
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
