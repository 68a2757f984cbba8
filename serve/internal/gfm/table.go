package gfm

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// Alignment is a table column's alignment, from its delimiter cell.
type Alignment uint8

// A column is aligned as its delimiter cell says: ":--" left, "--:"
// right, ":-:" center, "---" not at all.
const (
	AlignNone Alignment = iota
	AlignLeft
	AlignRight
	AlignCenter
)

// String is the value of the align attribute; "" for AlignNone.
func (a Alignment) String() string {
	switch a {
	case AlignLeft:
		return "left"
	case AlignRight:
		return "right"
	case AlignCenter:
		return "center"
	}
	return ""
}

// Table is a GFM table: a TableHeader, then a TableRow per body row.
type Table struct {
	ast.BaseBlock
	// Alignments has one entry per column.
	Alignments []Alignment
}

// Kind implements ast.Node.
func (*Table) Kind() ast.NodeKind { return KindTable }

// Dump implements ast.Node.
func (n *Table) Dump(source []byte, level int) { ast.DumpHelper(n, source, level, nil, nil) }

// TableHeader is a table's header row: its children are TableCells.
type TableHeader struct{ ast.BaseBlock }

// Kind implements ast.Node.
func (*TableHeader) Kind() ast.NodeKind { return KindTableHeader }

// Dump implements ast.Node.
func (n *TableHeader) Dump(source []byte, level int) { ast.DumpHelper(n, source, level, nil, nil) }

// TableRow is a table's body row: its children are TableCells.
type TableRow struct{ ast.BaseBlock }

// Kind implements ast.Node.
func (*TableRow) Kind() ast.NodeKind { return KindTableRow }

// Dump implements ast.Node.
func (n *TableRow) Dump(source []byte, level int) { ast.DumpHelper(n, source, level, nil, nil) }

// TableCell is one cell; its line is parsed as inlines.
type TableCell struct {
	ast.BaseBlock
	Alignment Alignment
}

// Kind implements ast.Node.
func (*TableCell) Kind() ast.NodeKind { return KindTableCell }

// Dump implements ast.Node.
func (n *TableCell) Dump(source []byte, level int) { ast.DumpHelper(n, source, level, nil, nil) }

// maxPadding is how many empty cells the tables of one document may
// add to rows shorter than their header. GFM pads each short row to
// the header's width; without a bound, a header of 10,000 columns
// over 20,000 one-byte rows (60 KiB) would become 200 million cells.
// Past the bound a short row is shown as it is. Each padded cell is
// some 26 bytes of page (an aligned <td>): 16,384 of them are 400 KiB,
// where 65,536 made 3 MiB of page from 64 KiB of Markdown.
const maxPadding = 1 << 14

// paddingKey holds the number of empty cells added so far to the
// document being parsed, an *int.
var paddingKey = parser.NewContextKey()

// tableParagraph turns a paragraph, from a line followed by a
// delimiter row with as many cells, into a table: that line is the
// header, the lines after the delimiter row are the body. The lines
// before the header stay a paragraph. The paragraph has already ended
// where GFM's table ends: at a blank line or another block's start.
type tableParagraph struct{}

// Transform implements parser.ParagraphTransformer.
func (tableParagraph) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	if lines.Len() < 2 {
		return
	}
	source := reader.Source()
	for i := 1; i < lines.Len(); i++ {
		aligns := delimiterRow(rowBytes(source, lines.At(i)))
		if aligns == nil {
			continue
		}
		header := splitRow(source, lines.At(i-1), len(aligns)+1)
		if len(header) != len(aligns) {
			continue
		}
		table := &Table{Alignments: aligns}
		head := &TableHeader{}
		for c, seg := range header {
			head.AppendChild(head, newCell(seg, aligns[c]))
		}
		table.AppendChild(table, head)
		padded, _ := pc.Get(paddingKey).(*int)
		if padded == nil {
			padded = new(int)
			pc.Set(paddingKey, padded)
		}
		for j := i + 1; j < lines.Len(); j++ {
			// GFM ignores the cells past the header's.
			cells := splitRow(source, lines.At(j), len(aligns))
			row := &TableRow{}
			for c, seg := range cells {
				row.AppendChild(row, newCell(seg, aligns[c]))
			}
			for c := len(cells); c < len(aligns) && *padded < maxPadding; c++ {
				row.AppendChild(row, &TableCell{Alignment: aligns[c]})
				*padded++
			}
			table.AppendChild(table, row)
		}
		parent := node.Parent()
		parent.InsertAfter(parent, node, table)
		if i == 1 {
			parent.RemoveChild(parent, node)
		} else {
			lines.SetSliced(0, i-1)
		}
		return
	}
}

func newCell(seg text.Segment, a Alignment) *TableCell {
	c := &TableCell{Alignment: a}
	if !seg.IsEmpty() {
		c.Lines().Append(seg)
	}
	return c
}

// rowBytes is a paragraph line without its line ending and the white
// space around it.
func rowBytes(source []byte, seg text.Segment) []byte {
	return bytes.Trim(seg.Value(source), " \t\r\n\v\f")
}

// splitRow is the first cells, at most limit, of a row: the line split
// at each pipe that no backslash escapes, without a leading and a
// trailing pipe, each cell without the white space around it.
func splitRow(source []byte, line text.Segment, limit int) []text.Segment {
	start, stop := line.Start, line.Stop
	for start < stop && isRowSpace(source[start]) {
		start++
	}
	for stop > start && isRowSpace(source[stop-1]) {
		stop--
	}
	if start < stop && source[start] == '|' {
		start++
	}
	if stop > start && source[stop-1] == '|' && (stop-2 < start || source[stop-2] != '\\') {
		stop--
	}
	if start == stop {
		// "|" or "||" (a paragraph's line is not blank): one empty cell.
		return []text.Segment{text.NewSegment(start, start)}
	}
	var cells []text.Segment
	from := start
	for k := start; k <= stop && len(cells) < limit; k++ {
		if k < stop && (source[k] != '|' || k > start && source[k-1] == '\\') {
			continue
		}
		a, b := from, k
		for a < b && isRowSpace(source[a]) {
			a++
		}
		for b > a && isRowSpace(source[b-1]) {
			b--
		}
		cells = append(cells, text.NewSegment(a, b))
		from = k + 1
	}
	return cells
}

func isRowSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

// delimiterRow is the alignments of row's cells if row is a
// delimiter row (cells of one or more "-", each with an optional ":"
// at either end, between pipes), else nil.
func delimiterRow(row []byte) []Alignment {
	if len(row) == 0 {
		return nil
	}
	if row[0] == '|' {
		row = row[1:]
	}
	if len(row) > 0 && row[len(row)-1] == '|' {
		row = row[:len(row)-1]
	}
	var aligns []Alignment
	for len(row) > 0 || aligns == nil {
		cell := row
		if k := bytes.IndexByte(row, '|'); k >= 0 {
			cell, row = row[:k], row[k+1:]
		} else {
			row = nil
		}
		cell = bytes.Trim(cell, " \t")
		left := len(cell) > 0 && cell[0] == ':'
		if left {
			cell = cell[1:]
		}
		right := len(cell) > 0 && cell[len(cell)-1] == ':'
		if right {
			cell = cell[:len(cell)-1]
		}
		if len(cell) == 0 || len(bytes.Trim(cell, "-")) != 0 {
			return nil
		}
		switch {
		case left && right:
			aligns = append(aligns, AlignCenter)
		case left:
			aligns = append(aligns, AlignLeft)
		case right:
			aligns = append(aligns, AlignRight)
		default:
			aligns = append(aligns, AlignNone)
		}
	}
	return aligns
}

// tableCodeSpans takes the backslash out of each "\|" in a code span
// in a table cell: GFM lets a cell hold a pipe, even in code, by
// escaping it, and a code span would show the backslash. Outside code
// "\|" is an ordinary backslash escape.
type tableCodeSpans struct{}

// Transform implements parser.ASTTransformer.
func (tableCodeSpans) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	if pc.Get(paddingKey) == nil {
		return // no table in this document
	}
	source := reader.Source()
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		if _, ok := n.(*TableCell); ok {
			_ = ast.Walk(n, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
				if code, ok := n.(*ast.CodeSpan); ok && entering {
					unescapePipes(code, source)
					return ast.WalkSkipChildren, nil
				}
				return ast.WalkContinue, nil
			})
			return ast.WalkSkipChildren, nil
		}
		if n.Type() == ast.TypeInline {
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
}

// unescapePipes splits code's text at each "\|", leaving the backslash
// out.
func unescapePipes(code *ast.CodeSpan, source []byte) {
	for c := code.FirstChild(); c != nil; c = c.NextSibling() {
		t, ok := c.(*ast.Text)
		if !ok {
			continue
		}
		k := bytes.Index(t.Segment.Value(source), []byte(`\|`))
		if k < 0 {
			continue
		}
		rest := ast.NewTextSegment(text.NewSegment(t.Segment.Start+k+1, t.Segment.Stop))
		rest.SetRaw(t.IsRaw())
		rest.SetSoftLineBreak(t.SoftLineBreak())
		t.Segment = t.Segment.WithStop(t.Segment.Start + k)
		t.SetSoftLineBreak(false)
		code.InsertAfter(code, t, rest)
		// The loop goes on with rest, which starts at the pipe.
	}
}
