package drafts

import (
	"bytes"
	"regexp"
	"strconv"
	"sync"
)

// nameLine is a top-level name: key in a frontmatter line.
var nameLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^name[ \t]*:`) })

// plainName is a name YAML reads back as the same string unquoted.
var plainName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9-]*$`) })

// withName returns a SKILL.md whose frontmatter gives name as the skill's
// name, every other byte as in data: the value of a top-level name: line
// is replaced (keeping its line end), or, without one, a name: line is
// added after the opening "---". ok is false when data has no frontmatter
// to edit; then data is returned as it is.
func withName(data []byte, name string) (out []byte, ok bool) {
	i := 0
	if bytes.HasPrefix(data, []byte("\ufeff")) {
		i = 3
	}
	open := true
	for i < len(data) {
		end := bytes.IndexByte(data[i:], '\n')
		if end < 0 {
			return data, false
		}
		line := data[i : i+end+1]
		body := bytes.TrimRight(line, "\r\n")
		eol := line[len(body):]
		switch {
		case open && len(bytes.TrimSpace(body)) == 0:
			// a blank line before the opening fence
		case open:
			if string(bytes.TrimRight(body, " \t")) != "---" {
				return data, false
			}
			open = false
			start := i + end + 1
			if j, found := nameAt(data, start); found {
				return splice(data, j, name), true
			}
			// No name: line: add one after the fence, if the fence closes.
			if !closes(data, start) {
				return data, false
			}
			ins := append([]byte("name: "+yamlScalar(name)), eol...)
			return append(append(append([]byte{}, data[:start]...), ins...), data[start:]...), true
		}
		i += end + 1
	}
	return data, false
}

// nameAt finds the top-level name: line of the frontmatter that starts at
// start, before its closing fence.
func nameAt(data []byte, start int) (int, bool) {
	for i := start; i < len(data); {
		end := bytes.IndexByte(data[i:], '\n')
		if end < 0 {
			end = len(data) - i
		}
		body := bytes.TrimRight(data[i:i+end], "\r")
		if string(bytes.TrimRight(body, " \t")) == "---" {
			return 0, false
		}
		if nameLine().Match(body) {
			return i, true
		}
		i += end + 1
	}
	return 0, false
}

// closes reports whether a closing fence follows start.
func closes(data []byte, start int) bool {
	for _, l := range bytes.SplitAfter(data[start:], []byte("\n")) {
		if string(bytes.TrimRight(l, " \t\r\n")) == "---" {
			return true
		}
	}
	return false
}

// splice replaces the value of the name: line at i, keeping its line end.
func splice(data []byte, i int, name string) []byte {
	end := bytes.IndexByte(data[i:], '\n')
	if end < 0 {
		end = len(data) - i
	}
	line := data[i : i+end]
	body := bytes.TrimRight(line, "\r")
	colon := bytes.IndexByte(body, ':')
	out := append([]byte{}, data[:i]...)
	out = append(out, body[:colon+1]...)
	out = append(out, ' ')
	out = append(out, yamlScalar(name)...)
	out = append(out, line[len(body):]...)
	return append(out, data[i+end:]...)
}

// yamlScalar is name as a YAML scalar: plain when that reads back as the
// same string, quoted otherwise. A valid skill name is always plain.
func yamlScalar(name string) string {
	switch name {
	case "null", "true", "false", "yes", "no", "on", "off", "y", "n":
	default:
		if plainName().MatchString(name) {
			return name
		}
	}
	return strconv.Quote(name)
}
