package serve

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// goldmark's core is worse than linear on some Markdown well within
// maxMarkdown: measured on 64 KiB bodies (BenchmarkRenderHostile),
// container markers at a line's start ("- " or "> " repeated) cost the
// square of their count, each new container measuring its column from
// the line's start; and each "]" that closes a link's text scans the
// rest of its line for the address ("[a](" repeated) and looks back
// over the whole paragraph for its delimiters ("[_](x)" repeated).
// Seconds of a core per view, at 64 KiB. The bounds below make both
// linear; past them the Markdown is shown as the text it is.

// maxNesting is how deep block quotes and list items may nest; a
// marker that would open one deeper is text (of a paragraph, or the
// paragraph it continues). Lists of five to ten levels are deep for
// people; markdown-it's CommonMark preset stops at 20 levels of tokens
// (a list level is two). Each line then costs at most this many
// containers, however many markers it holds.
const maxNesting = 16

// maxLinkEnds is how many "]" that close an open link text one
// paragraph (or heading, or table cell) may hold; past it a "]" is
// text, and no link or image ends there. Each costs up to the block's
// length: with the bound, a block's links cost at most this many times
// its length.
const maxLinkEnds = 256

// Parser context keys: made once, never changed.
var (
	// linksKey holds the block's count of link ends (*int).
	linksKey = parser.NewContextKey()
	// nestedKey and manyKey are true once a marker was too deep and a
	// link end one too many: the note above the body says so.
	nestedKey = parser.NewContextKey()
	manyKey   = parser.NewContextKey()
)

// boundedParser is goldmark's parser with the bounds: its list and
// block quote parsers open nothing deeper than maxNesting, its link
// parser ends no more than maxLinkEnds links a block.
func boundedParser() parser.Parser {
	blocks := parser.DefaultBlockParsers()
	for i, b := range blocks {
		if b.Value == parser.NewListParser() || b.Value == parser.NewBlockquoteParser() {
			blocks[i].Value = shallow{b.Value.(parser.BlockParser)}
		}
	}
	inlines := parser.DefaultInlineParsers()
	for i, p := range inlines {
		if p.Value == parser.NewLinkParser() {
			inlines[i].Value = fewLinks{p.Value.(parser.InlineParser)}
		}
	}
	return parser.NewParser(parser.WithBlockParsers(blocks...), parser.WithInlineParsers(inlines...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...))
}

// shallow is a container's parser (a list's, a block quote's) that
// opens nothing below maxNesting containers: the line is then what it
// would be without the marker's meaning, text. A list's items are
// opened by the list item parser, inside a list this let open.
type shallow struct{ parser.BlockParser }

// Open implements parser.BlockParser.
func (s shallow) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	if nesting(parent) >= maxNesting {
		if line, _ := reader.PeekLine(); opensContainer(line, pc.BlockOffset()) {
			pc.Set(nestedKey, true)
		}
		return nil, parser.NoChildren
	}
	return s.BlockParser.Open(parent, reader, pc)
}

// nesting is how many block quotes and list items n is in, n included.
func nesting(n ast.Node) int {
	d := 0
	for ; n != nil; n = n.Parent() {
		switch n.Kind() {
		case ast.KindBlockquote, ast.KindListItem:
			d++
		}
	}
	return d
}

// opensContainer tells whether line, at pos, starts with a block
// quote's marker or a list item's ("-", "+", "*", or up to nine digits
// and "." or ")", then white space or the line's end): whether a
// refusal changed what the line is, for the note.
func opensContainer(line []byte, pos int) bool {
	if pos < 0 || pos >= len(line) {
		return false
	}
	rest := line[pos:]
	switch c := rest[0]; {
	case c == '>':
		return true
	case c == '-' || c == '+' || c == '*':
		rest = rest[1:]
	default:
		i := 0
		for i < len(rest) && i < 10 && '0' <= rest[i] && rest[i] <= '9' {
			i++
		}
		if i == 0 || i > 9 || i >= len(rest) || rest[i] != '.' && rest[i] != ')' {
			return false
		}
		rest = rest[i+1:]
	}
	return len(rest) == 0 || util.IsSpace(rest[0])
}

// fewLinks is goldmark's link parser, which passes a block's "]" past
// maxLinkEnds as text.
type fewLinks struct{ parser.InlineParser }

// Parse implements parser.InlineParser.
func (f fewLinks) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	if line, _ := block.PeekLine(); len(line) > 0 && line[0] == ']' && pc.IsInLinkLabel() {
		n, _ := pc.Get(linksKey).(*int)
		if n == nil {
			n = new(int)
			pc.Set(linksKey, n)
		}
		if *n >= maxLinkEnds {
			pc.Set(manyKey, true)
			return nil
		}
		*n++
	}
	return f.InlineParser.Parse(parent, block, pc)
}

// CloseBlock implements parser.CloseBlocker: the count is the block's.
func (f fewLinks) CloseBlock(parent ast.Node, block text.Reader, pc parser.Context) {
	pc.Set(linksKey, nil)
	if c, ok := f.InlineParser.(parser.CloseBlocker); ok {
		c.CloseBlock(parent, block, pc)
	}
}

// Compile-time checks of the interfaces the bounds implement.
var (
	_ parser.BlockParser  = shallow{}
	_ parser.InlineParser = fewLinks{}
	_ parser.CloseBlocker = fewLinks{}
)
