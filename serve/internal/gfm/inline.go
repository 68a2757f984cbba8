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

// maxOpenTildes is how many runs of tildes may wait for their closing
// run in one block; past it a run can only close. goldmark matches
// delimiters when the block's inlines are parsed, each closing run
// looking back over every delimiter that waits, so without a bound
// "~~a~ " repeated (each "~" closes nothing, each "~~" waits) would
// cost the square of its length: 64 KiB of it, half a second.
const maxOpenTildes = 128

// tildeKey holds the block's *openTildes while its inlines are parsed.
var tildeKey = parser.NewContextKey()

// openTildes counts, by length, the runs of tildes of a block that
// will wait for a closing run, as the runs are parsed: a run that can
// close takes one that waits of its length, if any (as goldmark will
// match them), else, if it can open, it waits. It is never less than
// what waits: what it takes as matched is matched (goldmark takes the
// nearest opener of the length), and a run that closes inside a link's
// text is not taken as matched (its opener may be outside the text,
// out of its reach). Runs goldmark drops unmatched (at the end of a
// link's text, inside a matched emphasis) still count.
type openTildes struct{ n [3]int }

// Trigger implements parser.InlineParser.
func (strikethrough) Trigger() []byte { return []byte{'~'} }

// Parse implements parser.InlineParser.
func (strikethrough) Parse(_ ast.Node, block text.Reader, pc parser.Context) ast.Node {
	open, _ := pc.Get(tildeKey).(*openTildes)
	if open == nil {
		open = &openTildes{}
		pc.Set(tildeKey, open)
	}
	before := block.PrecendingCharacter()
	line, seg := block.PeekLine()
	d := parser.ScanDelimiter(line, before, 1, tildes{})
	if d == nil {
		return nil
	}
	length := d.OriginalLength
	seg = seg.WithStop(seg.Start + length)
	block.Advance(length)
	if length <= 2 {
		switch {
		case d.CanClose && open.n[length] > 0:
			if !pc.IsInLinkLabel() {
				open.n[length]--
			}
		case !d.CanOpen:
		case open.n[1]+open.n[2] >= maxOpenTildes:
			d.CanOpen = false
		default:
			open.n[length]++
		}
	}
	if length > 2 || !d.CanOpen && !d.CanClose {
		// Text, the whole run at once (not a tilde at a time: a long
		// run costs its length, not its square).
		return ast.NewTextSegment(seg)
	}
	d.Segment = seg
	pc.PushDelimiter(d)
	return d
}

// CloseBlock implements parser.CloseBlocker: the count is the block's.
func (strikethrough) CloseBlock(_ ast.Node, _ text.Reader, pc parser.Context) {
	pc.Set(tildeKey, nil)
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
