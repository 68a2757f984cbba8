package gfm

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// linkify makes bare addresses links, as GFM's extended autolinks:
// "www." or "http://" or "https://" (any case) followed by a valid
// domain, then anything up to white space or "<", less trailing
// punctuation. They are recognised at the start of a line, after white
// space, or after "*", "_", "~" or "(": the characters it is triggered
// by (goldmark calls inline parsers at a line's start as at a space).
// The node is goldmark's AutoLink, so whoever renders links decides
// which addresses a page shows as links.
type linkify struct{}

// Trigger implements parser.InlineParser.
func (linkify) Trigger() []byte { return []byte{' ', '*', '_', '~', '('} }

// Parse implements parser.InlineParser.
func (linkify) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	if pc.IsInLinkLabel() {
		return nil // a link's text holds no link
	}
	line, seg := block.PeekLine()
	if len(line) == 0 {
		return nil
	}
	c := line[0]
	before := 0
	switch c {
	case ' ', '\t', '(':
		before = 1
	case '*', '_', '~':
		for before < len(line) && line[before] == c {
			before++
		}
	}
	host, www := autolinkHost(line[before:])
	if host == 0 {
		return nil
	}
	n := addressEnd(line[before:], host)
	if _, ok := domain(line[before+host : before+n]); !ok {
		return nil
	}
	// What comes before the address is what it would be without it:
	// text, or a run of delimiters, which goes through its own parser
	// so that "*www.example.com*" is emphasised.
	switch c {
	case '*', '_', '~':
		var d ast.Node
		if c == '~' {
			d = strikethrough{}.Parse(parent, block, pc)
		} else {
			d = parser.NewEmphasisParser().Parse(parent, block, pc)
		}
		if d == nil {
			return nil
		}
		// The run is taken whole (ScanDelimiter takes all of it, and
		// strikethrough a run of three or more as text): the address
		// follows.
		parent.AppendChild(parent, d)
	default:
		if before > 0 {
			ast.MergeOrAppendTextSegment(parent, seg.WithStop(seg.Start+before))
			block.Advance(before)
		}
	}
	start := seg.Start + before
	link := ast.NewAutoLink(ast.AutoLinkURL, ast.NewTextSegment(text.NewSegment(start, start+n)))
	if www {
		link.Protocol = []byte("http")
	}
	block.Advance(n)
	return link
}

// maxDomain is the longest domain an address may have: a DNS name's
// 253 characters.
const maxDomain = 253

// autolinkHost is where the domain of the extended autolink at the start
// of s begins, 0 if there is none; www is whether it has no scheme.
//
// It looks no further than the domain and what follows it, so that a
// candidate that is not a link costs little: scanning each to the end of
// its address made a line of "_www.x" repeated cost 1.3 s for 64 KiB.
// GFM checks the domain of the address after trimming its end, and the
// trim reaches the domain only when everything after it goes, and then
// takes the domain's final periods and underscores. So: a domain valid
// as it is stays valid and is a link; one that is valid only without
// its final periods and underscores is a link only if what follows it
// can all be trimmed, which is read up to the first character that
// cannot (a candidate that fails there read no further than the next
// candidate's "www." or scheme could start); any other is none.
func autolinkHost(s []byte) (host int, www bool) {
	switch {
	case hasPrefix(s, "www."):
		host, www = 4, true
	case hasPrefixFold(s, "http://"):
		host = 7
	case hasPrefixFold(s, "https://"):
		host = 8
	default:
		return 0, false
	}
	d := s[host:min(len(s), host+maxDomain+1)]
	n, ok := domain(d)
	switch {
	case n > maxDomain:
		return 0, false
	case ok:
		return host, www
	}
	k := n
	for k > 0 && (d[k-1] == '.' || d[k-1] == '_') {
		k--
	}
	if _, ok := domain(d[:k]); !ok || !trimmable(s[host+n:]) {
		return 0, false
	}
	return host, www
}

// trimmable reports whether the start of s up to the address's end (white
// space, "<" or the line's end) is all what GFM trims from an address:
// ?!.,:*_~ and ")", and entity references ("&", letters or digits, ";").
func trimmable(s []byte) bool {
	for i := 0; i < len(s); {
		switch c := s[i]; c {
		case '?', '!', '.', ',', ':', '*', '_', '~', ')':
			i++
		case '&':
			j := i + 1
			for j < len(s) && isAlnum(s[j]) {
				j++
			}
			if j == i+1 || j == len(s) || s[j] != ';' {
				return false
			}
			i = j + 1
		default:
			return c == '<' || isRowSpace(c)
		}
	}
	return true
}

// addressEnd is the length of the address at the start of s whose domain
// starts at host: to white space or "<", less what GFM trims at its end.
func addressEnd(s []byte, host int) int {
	end := host
	opening, closing := 0, 0
	for end < len(s) {
		c := s[end]
		if c == '<' || isRowSpace(c) {
			break
		}
		switch c {
		case '(':
			opening++
		case ')':
			closing++
		}
		end++
	}
	return trimTrailing(s, host, end, opening, closing)
}

// trimTrailing is where the address s[:end] ends without what GFM
// leaves out at its end, repeatedly: one of ?!.,:*_~, a ")" that has
// no "(" to match in the address, and what looks like an entity
// reference ("&" and letters or digits) before a final ";".
func trimTrailing(s []byte, host, end, opening, closing int) int {
	for end > host {
		switch c := s[end-1]; c {
		case '?', '!', '.', ',', ':', '*', '_', '~':
			end--
		case ')':
			if closing <= opening {
				return end
			}
			closing--
			end--
		case ';':
			k := end - 2
			for k >= host && isAlnum(s[k]) {
				k--
			}
			if k < host || k == end-2 || s[k] != '&' {
				return end
			}
			end = k
		default:
			return end
		}
	}
	return end
}

// domain is the length of the domain the address s (after its scheme or
// "www.") starts with, and whether it is valid: segments of letters,
// digits, "_" and "-" separated by periods, at least two segments, no
// "_" in the last two.
func domain(s []byte) (n int, ok bool) {
	segments := 0            // non-empty segments so far
	underscore := false      // in the current segment
	underscores := [2]bool{} // in the last two segments that ended
	length := 0
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			if length > 0 {
				segments++
				underscores[0], underscores[1] = underscores[1], underscore
			}
			underscore, length = false, 0
			continue
		}
		if c == '_' {
			underscore = true
		} else if c != '-' && !isAlnum(c) {
			break
		}
		length++
	}
	if length > 0 {
		segments++
		underscores[0], underscores[1] = underscores[1], underscore
	}
	return i, segments >= 2 && !underscores[0] && !underscores[1]
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func hasPrefix(s []byte, prefix string) bool {
	return len(s) >= len(prefix) && string(s[:len(prefix)]) == prefix
}

// hasPrefixFold is hasPrefix for an ASCII prefix in any case.
func hasPrefixFold(s []byte, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := range len(prefix) {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}
