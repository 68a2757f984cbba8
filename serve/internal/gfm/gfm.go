// Package gfm adds the GitHub-flavoured Markdown that serve's pages
// show to goldmark's CommonMark core: tables, strikethrough, task list
// markers and bare links (GFM's "extended autolinks").
//
// goldmark's own extension package does the same, but its package
// initialisation compiles linkify's regular expressions (bounded
// repetitions that expand to large programs): some 5 ms of CPU and
// some 170 page faults on every start of the CLI, which links serve
// in the one binary. Nothing here runs at package initialisation but
// the registration of node kinds and parser context keys (constants
// once made), and nothing is compiled: every rule is a plain scan over
// bytes, linear in its input.
//
// What differs from goldmark's extension, each time to follow the GFM
// specification (https://github.github.com/gfm/) or cmark-gfm, its
// reference implementation: a table's header row must have as many
// cells as its delimiter row; strikethrough needs an opening and a
// closing run of the same length (one or two tildes); a task list
// marker must be followed by white space; a bare link's domain has no
// underscore in its last two segments and its path runs to white space
// or "<" (goldmark stops at ":" or "\"); "HTTP://" is a scheme as
// "http://" is; e-mail addresses are left as text (serve would show
// them as text anyway). A domain is ASCII letters, digits, "-" and "_".
// Task list boxes render as nothing: the pages hold no form inputs.
//
// Hostile input is bounded where GFM would let it grow: the empty cells
// that pad short rows (maxPadding per document), and the tilde runs
// waiting for their closer (maxOpenTildes per block), which goldmark's
// delimiter matching would otherwise go over again for every closer.
package gfm

import (
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// Extension adds tables, strikethrough, task list markers and bare
// links to a goldmark.Markdown.
type Extension struct{}

// Extend implements goldmark.Extender.
func (Extension) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(
		// After the link reference definitions (100) are taken out of
		// a paragraph: what remains may be a table.
		parser.WithParagraphTransformers(util.Prioritized(tableParagraph{}, 200)),
		parser.WithASTTransformers(util.Prioritized(tableCodeSpans{}, 200)),
		parser.WithInlineParsers(
			// Before links (200): "[x]" opening a list item is a marker,
			// even where a reference "x" is defined.
			util.Prioritized(taskMarker{}, 0),
			// Before emphasis (500): a run of "*" or "_" just before a
			// bare link is passed to the emphasis parser by linkify.
			util.Prioritized(linkify{}, 450),
			util.Prioritized(strikethrough{}, 500),
		),
	)
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(htmlRenderer{}, 500)))
}

// Compile-time checks of the interfaces the parts implement.
var (
	_ goldmark.Extender           = Extension{}
	_ parser.ParagraphTransformer = tableParagraph{}
	_ parser.ASTTransformer       = tableCodeSpans{}
	_ parser.InlineParser         = taskMarker{}
	_ parser.InlineParser         = linkify{}
	_ parser.InlineParser         = strikethrough{}
	_ parser.CloseBlocker         = strikethrough{}
	_ parser.DelimiterProcessor   = tildes{}
	_ renderer.NodeRenderer       = htmlRenderer{}
)

// Node kinds of the nodes this package adds.
var (
	KindTable         = ast.NewNodeKind("Table")
	KindTableHeader   = ast.NewNodeKind("TableHeader")
	KindTableRow      = ast.NewNodeKind("TableRow")
	KindTableCell     = ast.NewNodeKind("TableCell")
	KindStrikethrough = ast.NewNodeKind("Strikethrough")
	KindTaskCheckBox  = ast.NewNodeKind("TaskCheckBox")
)
