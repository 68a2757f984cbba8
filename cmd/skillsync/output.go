package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/skillsync/skillsync/internal/termtext"
	"github.com/skillsync/skillsync/skill"
)

// writeJSON prints v indented, with a final newline. Slices are sorted by
// their producers and map keys by encoding/json, so the same state always
// prints the same bytes.
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(termtext.EscapeJSON(buf.Bytes()))
	return err
}

// reportProblems writes catalog problems to stderr, one a line in the
// form SOURCE:FILE:LINE: LEVEL: MESSAGE (RULE). They never make a
// read-only command fail: a skill with an error is skipped, the rest work.
func (a *app) reportProblems(problems []skill.Problem) {
	if a.quiet {
		return
	}
	for _, p := range problems {
		if l := a.jsonLog(); l != nil {
			logProblem(l, p)
			continue
		}
		fmt.Fprintln(a.stderr, p.String())
	}
}

// safe makes text that came from a source fit to print on a terminal:
// control and bidirectional-formatting characters are shown escaped, so a
// skill cannot clear the screen, fake rows or reorder what is shown.
func safe(s string) string { return termtext.Escape(s) }

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

// table aligns columns as tabwriter does, and writes through a buffer:
// a tabwriter alone writes every cell in its own write, thousands of
// system calls for a long list.
type table struct {
	*tabwriter.Writer
	buf *bufio.Writer
}

func newTable(w io.Writer) *table {
	buf := bufio.NewWriter(w)
	return &table{Writer: tabwriter.NewWriter(buf, 0, 4, 2, ' ', 0), buf: buf}
}

// Flush writes out the aligned rows.
func (t *table) Flush() error {
	if err := t.Writer.Flush(); err != nil {
		return err
	}
	return t.buf.Flush()
}
