package skill

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
)

// MaxFrontmatter is the largest frontmatter accepted, in bytes. Real
// frontmatter is a few hundred bytes; the cap bounds what YAML parsing of a
// hostile file can cost.
const MaxFrontmatter = 64 << 10

// maxHead is the most of a SKILL.md read while looking for the end of its
// frontmatter: room for MaxFrontmatter with CRLF line ends (which split
// turns into LF), the fences, a BOM and some blank lines before the
// opening fence. A file whose frontmatter is not closed by then is
// refused without reading on.
const maxHead = 2*MaxFrontmatter + 1024

var bom = []byte("\xef\xbb\xbf")

// scanHead reads a SKILL.md from r up to and including the line that
// closes its frontmatter, and not one byte of the body after it. It stops
// as soon as what it has decides the outcome: the first line that is not
// blank is not "---" (no frontmatter), the closing "---" is found, the
// file ends, or maxHead bytes are read. In the last case capped is set and
// head ends after its last complete line.
//
// Parse and Load both find the frontmatter through scanHead, so a skill
// parses the same from bytes and from a file.
func scanHead(r io.Reader) (head []byte, capped bool, err error) {
	br := bufio.NewReaderSize(r, 4096)
	inside := false
	lineStart := 0
	for {
		chunk, err := br.ReadSlice('\n')
		head = append(head, chunk...)
		switch {
		case err == nil || errors.Is(err, io.EOF) && len(head) > lineStart:
			line := head[lineStart:]
			if lineStart == 0 {
				line = bytes.TrimPrefix(line, bom)
			}
			switch {
			case inside && isFence(line):
				return head, false, nil
			case !inside && len(bytes.TrimSpace(line)) > 0:
				if !isFence(line) {
					return head, false, nil // no frontmatter: split says so
				}
				inside = true
			}
			lineStart = len(head)
		case errors.Is(err, bufio.ErrBufferFull):
		case !errors.Is(err, io.EOF):
			return nil, false, err
		}
		if errors.Is(err, io.EOF) {
			return head, false, nil
		}
		if len(head) > maxHead {
			return head[:lineStart], true, nil
		}
	}
}

// isFence reports whether a raw line, with its line end, is "---": split
// reads it so once CRLF is turned into LF and spaces and tabs are trimmed
// from its end.
func isFence(line []byte) bool {
	if l, ok := bytes.CutSuffix(line, []byte("\n")); ok {
		line, _ = bytes.CutSuffix(l, []byte("\r"))
	}
	return string(bytes.TrimRight(line, " \t")) == "---"
}

// frontmatter finds the frontmatter in the head of a SKILL.md that
// scanHead read. fmLine is the 1-based line of the first frontmatter line,
// so YAML line numbers can be turned into file line numbers.
func frontmatter(head []byte, capped bool) (fm string, fmLine int, p *Problem) {
	fm, fmLine, p = split(head)
	if capped && p != nil && p.Rule == "frontmatter-unterminated" {
		return "", 0, tooLarge(p.Line)
	}
	return fm, fmLine, p
}

// split finds the frontmatter of a SKILL.md. It accepts a UTF-8 BOM, CRLF
// line ends and blank lines before the opening "---". fmLine is the
// 1-based line of the first frontmatter line.
func split(data []byte) (fm string, fmLine int, p *Problem) {
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
		return "", 0, &Problem{Level: Error, Rule: "frontmatter-missing", Line: line,
			Message: `no frontmatter: the file must start with a line "---", then YAML with name and description, then "---"`}
	}
	if !found {
		rest = ""
	}
	fmLine = line + 1
	end := closing(rest)
	if end < 0 {
		if len(rest) > MaxFrontmatter {
			return "", 0, tooLarge(line)
		}
		return "", 0, &Problem{Level: Error, Rule: "frontmatter-unterminated", Line: line,
			Message: `frontmatter opened here is never closed by a line "---"`}
	}
	if end > MaxFrontmatter {
		return "", 0, tooLarge(line)
	}
	return rest[:end], fmLine, nil
}

// closing returns where the line that is "---" starts, which is where
// the frontmatter ends, or -1.
func closing(s string) int {
	for off := 0; off <= len(s); {
		nl := strings.IndexByte(s[off:], '\n')
		lineEnd := len(s)
		if nl >= 0 {
			lineEnd = off + nl
		}
		if strings.TrimRight(s[off:lineEnd], " \t") == "---" {
			return off
		}
		if nl < 0 {
			break
		}
		off = lineEnd + 1
	}
	return -1
}

func tooLarge(line int) *Problem {
	return &Problem{Level: Error, Rule: "frontmatter-too-large", Line: line,
		Message: "frontmatter is larger than 64 KiB: keep it to the metadata and move the rest into the body"}
}
