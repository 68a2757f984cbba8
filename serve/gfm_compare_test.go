package serve

import (
	"bytes"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// goldmarkBoxes renders goldmark's task list boxes as nothing, as
// serve rendered them when it used goldmark's extension package.
type goldmarkBoxes struct{}

func (goldmarkBoxes) RegisterFuncs(r renderer.NodeRendererFuncRegisterer) {
	r.Register(east.KindTaskCheckBox, func(util.BufWriter, []byte, ast.Node, bool) (ast.WalkStatus, error) {
		return ast.WalkContinue, nil
	})
}

// withGoldmarkExtension renders md as serve did with goldmark's own
// GFM extensions (linked in this test only, never in the binary).
func withGoldmarkExtension(t *testing.T, md string) string {
	t.Helper()
	m := goldmark.New(
		goldmark.WithExtensions(extension.Linkify, extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)),
			extension.Strikethrough, extension.TaskList),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(safeLinks{}, 100), util.Prioritized(goldmarkBoxes{}, 100))),
	)
	var buf bytes.Buffer
	if err := m.Convert([]byte(md), &buf); err != nil {
		t.Fatalf("goldmark's extension on %q: %v", md, err)
	}
	return buf.String()
}
