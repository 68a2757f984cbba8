package gfm

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// htmlRenderer writes this package's nodes as HTML, in the layout of
// the GFM specification's examples. A cell's alignment is an align
// attribute, never a style: pages whose Content-Security-Policy
// forbids inline styles show it.
type htmlRenderer struct{}

// RegisterFuncs implements renderer.NodeRenderer.
func (htmlRenderer) RegisterFuncs(r renderer.NodeRendererFuncRegisterer) {
	r.Register(KindTable, wrap("<table>\n", "</table>\n"))
	r.Register(KindTableHeader, wrap("<thead>\n<tr>\n", "</tr>\n</thead>\n"))
	r.Register(KindTableRow, renderTableRow)
	r.Register(KindTableCell, renderTableCell)
	r.Register(KindStrikethrough, wrap("<del>", "</del>"))
	r.Register(KindTaskCheckBox, func(util.BufWriter, []byte, ast.Node, bool) (ast.WalkStatus, error) {
		return ast.WalkContinue, nil
	})
}

func renderTableRow(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		if _, first := n.PreviousSibling().(*TableHeader); first {
			_, _ = w.WriteString("<tbody>\n")
		}
		_, _ = w.WriteString("<tr>\n")
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString("</tr>\n")
	if n.NextSibling() == nil {
		_, _ = w.WriteString("</tbody>\n")
	}
	return ast.WalkContinue, nil
}

func renderTableCell(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*TableCell)
	tag := "td"
	if _, ok := n.Parent().(*TableHeader); ok {
		tag = "th"
	}
	if !entering {
		_, _ = w.WriteString("</" + tag + ">\n")
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString("<" + tag)
	if a := n.Alignment.String(); a != "" {
		_, _ = w.WriteString(` align="` + a + `"`)
	}
	_ = w.WriteByte('>')
	return ast.WalkContinue, nil
}

// wrap renders a node as its children between open and close.
func wrap(open, close string) renderer.NodeRendererFunc {
	return func(w util.BufWriter, _ []byte, _ ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			_, _ = w.WriteString(open)
		} else {
			_, _ = w.WriteString(close)
		}
		return ast.WalkContinue, nil
	}
}
