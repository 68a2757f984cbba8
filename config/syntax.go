package config

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// maxLocateLines bounds the lines syntaxError parses prefixes of: the
// search is quadratic, and a config is written by people.
const maxLocateLines = 2000

// yamlLineOf reads the line yaml.v3 puts in a syntax error.
var yamlLineOf = regexp.MustCompile(`^yaml: line (\d+): `)

// syntaxError is err, yaml.v3's error for a document that does not parse,
// as "line N: problem" with the line where the document stops making
// sense and that line's text. yaml.v3 names the line before the start of
// the construct that holds the mistake, which may be many lines above it:
// the first prefix of the document that does not parse ends at the
// mistake (or at the start of a quote or bracket left open there).
func syntaxError(data []byte, err error) error {
	msg := err.Error()
	problem, line := strings.TrimPrefix(msg, "yaml: "), 0
	if m := yamlLineOf.FindStringSubmatch(msg); m != nil {
		problem = msg[len(m[0]):]
		line, _ = strconv.Atoi(m[1])
	}
	if strings.Contains(problem, "end of stream") {
		// A quote or bracket left open: yaml.v3 names the end.
		line = 0
	}
	lines := bytes.Split(data, []byte("\n"))
	if len(lines) <= maxLocateLines {
		for n := max(line, 1); n <= len(lines); n++ {
			var doc yaml.Node
			if yaml.Unmarshal(bytes.Join(lines[:n], []byte("\n")), &doc) != nil {
				line = n
				break
			}
		}
	}
	if line < 1 || line > len(lines) {
		return errors.New(problem)
	}
	text := strings.TrimRight(string(lines[line-1]), "\r")
	hint := ""
	if indent := text[:len(text)-len(strings.TrimLeft(text, " \t"))]; strings.Contains(indent, "\t") {
		hint = "; YAML indents with spaces, not tabs"
	}
	return fmt.Errorf("line %d: %s%s: %q", line, problem, hint, strings.TrimSpace(text))
}
