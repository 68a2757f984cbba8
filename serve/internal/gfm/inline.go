package gfm

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// Strikethrough is text between "~~" and "~~" (or "~" and "~").
type Strikethrough struct{ ast.BaseInline }

// Kind implements ast.Node.
func (*Strikethrough) Kind() ast.NodeKind { return KindStrikethrough }

// Dump implements ast.Node.
func (n *Strikethrough) Dump(source []byte, level int) { ast.DumpHelper(n, source, level, nil, nil) }

// strikethrough parses runs of tildes as delimiters: GFM strikes
// through text between an opening and a closing run of the same
// length, one or two tildes, by the flanking rules of emphasis. A
// longer run is text.
type strikethrough struct{}

// Trigger implements parser.InlineParser.
func (strikethrough) Trigger() []byte { return []byte{'~'} }

// Parse implements parser.InlineParser.
func (strikethrough) Parse(_ ast.Node, block text.Reader, pc parser.Context) ast.Node {
	before := block.PrecendingCharacter()
	line, seg := block.PeekLine()
	d := parser.ScanDelimiter(line, before, 1, tildes{})
	if d == nil {
		return nil
	}
	seg = seg.WithStop(seg.Start + d.OriginalLength)
	block.Advance(d.OriginalLength)
	if d.OriginalLength > 2 {
		// The whole run is text (taken at once, not a tilde at a time:
		// a long run costs its length, not its square).
		return ast.NewTextSegment(seg)
	}
	d.Segment = seg
	pc.PushDelimiter(d)
	return d
}

// tildes is the delimiter processor of strikethrough.
type tildes struct{}

// IsDelimiter implements parser.DelimiterProcessor.
func (tildes) IsDelimiter(b byte) bool { return b == '~' }

// CanOpenCloser implements parser.DelimiterProcessor.
func (tildes) CanOpenCloser(opener, closer *parser.Delimiter) bool {
	return opener.Char == '~' && closer.Char == '~' && opener.OriginalLength == closer.OriginalLength
}

// OnMatch implements parser.DelimiterProcessor.
func (tildes) OnMatch(int) ast.Node { return &Strikethrough{} }

// TaskCheckBox is a task list item's "[ ]" or "[x]".
type TaskCheckBox struct {
	ast.BaseInline
	Checked bool
}

// Kind implements ast.Node.
func (*TaskCheckBox) Kind() ast.NodeKind { return KindTaskCheckBox }

// Dump implements ast.Node.
func (n *TaskCheckBox) Dump(source []byte, level int) { ast.DumpHelper(n, source, level, nil, nil) }

// taskMarker parses "[ ]", "[x]" or "[X]" (or "[\t]") followed by
// white space at the start of a list item's first paragraph, with the
// white space after it.
type taskMarker struct{}

// Trigger implements parser.InlineParser.
func (taskMarker) Trigger() []byte { return []byte{'['} }

// Parse implements parser.InlineParser.
func (taskMarker) Parse(parent ast.Node, block text.Reader, _ parser.Context) ast.Node {
	// With no child yet, parent's text before the "[" is empty: the
	// parser adds what it passes over before it calls this one.
	if parent.HasChildren() {
		return nil
	}
	item, ok := parent.Parent().(*ast.ListItem)
	if !ok || item.FirstChild() != parent {
		return nil
	}
	switch parent.(type) {
	case *ast.Paragraph, *ast.TextBlock:
	default:
		return nil
	}
	line, _ := block.PeekLine()
	if len(line) < 3 || line[2] != ']' {
		return nil
	}
	checked := false
	switch line[1] {
	case 'x', 'X':
		checked = true
	case ' ', '\t':
	default:
		return nil
	}
	n := 3
	if n < len(line) && !isRowSpace(line[n]) {
		return nil
	}
	for n < len(line) && (line[n] == ' ' || line[n] == '\t') {
		n++
	}
	block.Advance(n)
	return &TaskCheckBox{Checked: checked}
}
