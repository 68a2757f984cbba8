package skill

import (
	"bytes"
	"strings"
)

// MaxFrontmatter is the largest frontmatter accepted, in bytes. Real
// frontmatter is a few hundred bytes; the cap bounds what YAML parsing of a
// hostile file can cost.
const MaxFrontmatter = 64 << 10

var bom = []byte("\xef\xbb\xbf")

// split separates the frontmatter from the body of a SKILL.md. It accepts a
// UTF-8 BOM, CRLF line ends and blank lines before the opening "---".
// fmLine is the 1-based line of the first frontmatter line, so YAML line
// numbers can be turned into file line numbers.
func split(data []byte) (fm, body string, fmLine int, p *Problem) {
	data = bytes.TrimPrefix(data, bom)
	text := strings.ReplaceAll(string(data), "\r\n", "\n")

	line := 1
	for {
		nl := strings.IndexByte(text, '\n')
		first := text
		if nl >= 0 {
			first = text[:nl]
		}
		if strings.TrimSpace(first) != "" || nl < 0 {
			break
		}
		text = text[nl+1:]
		line++
	}
	open, rest, found := strings.Cut(text, "\n")
	if strings.TrimRight(open, " \t") != "---" {
		return "", "", 0, &Problem{Level: Error, Rule: "frontmatter-missing", Line: line,
			Message: `no frontmatter: the file must start with a line "---", then YAML with name and description, then "---"`}
	}
	if !found {
		rest = ""
	}
	fmLine = line + 1
	end, bodyStart := closing(rest)
	if end < 0 {
		if len(rest) > MaxFrontmatter {
			return "", "", 0, tooLarge(line)
		}
		return "", "", 0, &Problem{Level: Error, Rule: "frontmatter-unterminated", Line: line,
			Message: `frontmatter opened here is never closed by a line "---"`}
	}
	if end > MaxFrontmatter {
		return "", "", 0, tooLarge(line)
	}
	return rest[:end], rest[bodyStart:], fmLine, nil
}

// closing finds the line that is "---" and returns where the frontmatter
// ends and where the body starts, or -1.
func closing(s string) (end, bodyStart int) {
	for off := 0; off <= len(s); {
		nl := strings.IndexByte(s[off:], '\n')
		lineEnd := len(s)
		if nl >= 0 {
			lineEnd = off + nl
		}
		if strings.TrimRight(s[off:lineEnd], " \t") == "---" {
			if nl < 0 {
				return off, len(s)
			}
			return off, lineEnd + 1
		}
		if nl < 0 {
			break
		}
		off = lineEnd + 1
	}
	return -1, -1
}

func tooLarge(line int) *Problem {
	return &Problem{Level: Error, Rule: "frontmatter-too-large", Line: line,
		Message: "frontmatter is larger than 64 KiB: keep it to the metadata and move the rest into the body"}
}
