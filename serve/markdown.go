package serve

import (
	"bytes"
	"html/template"
	"net/url"
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/skillsync/skillsync/serve/internal/gfm"
)

// markdown renders GitHub-flavoured Markdown with nothing that runs:
// goldmark leaves raw HTML out (it is not told otherwise), escapes all
// text and attributes, and safeLinks renders every link and image, so
// only http(s) and relative addresses that parse are kept (no
// javascript:, data: or vbscript:), links get rel="nofollow", and task
// list boxes are left out. This is the policy a bluemonday pass used to
// apply to goldmark's output; bluemonday, its CSS parser and
// golang.org/x/net/html cost every start of the CLI some 10 ms of
// package initialisation (their regexps and tables), for pages only
// serve renders. Its parser is goldmark's with the bounds of
// boundedParser, which keep hostile Markdown linear. It is made at the
// first page that needs it.
var markdown = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithParser(boundedParser()),
		// GFM's tables, strikethrough, task lists and bare links, the
		// table's alignment as align="" (an inline style is what the
		// pages' policy forbids), task list boxes as nothing. Ours, not
		// goldmark's extension package: its package initialisation
		// (linkify's regexps) cost every start of the CLI some 5 ms.
		goldmark.WithExtensions(gfm.Extension{}),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(safeLinks{}, 100))),
	)
})

// maxMarkdown is the longest body rendered as Markdown; a longer one is
// shown as plain text. With boundedParser's bounds goldmark's worst
// inputs measured take some 50 ms of CPU at this length
// (BenchmarkRenderHostile); a few are still worse than linear, with
// small constants (link reference definitions, one a line: a second at
// 256 KiB), so the length stays bounded. Real bodies are far shorter
// (the Agent Skills guidance is under 500 lines).
const maxMarkdown = 64 << 10

// rendered is a skill's body as a page shows it.
type rendered struct {
	HTML template.HTML
	// Note says what of the body is shown as text rather than as
	// Markdown, and why; "" when nothing is.
	Note string
}

// The notes of rendered.
const (
	noteLong   = "This SKILL.md is longer than 64 KiB: it is shown as plain text."
	noteNested = "Lists or quotes nested deeper than 16 levels are shown as text."
	noteLinks  = "Past 256 links in one paragraph, the rest of its brackets are shown as text."
)

// renderMarkdown turns a skill's untrusted Markdown into HTML that is
// safe to put in a page. A link relative to the page resolves against
// base, the folder of the skill's files the Markdown is in
// ("/skills/NAME/files/"): a skill links its own files so, and the
// page's address would take them elsewhere. "" leaves them as written.
func renderMarkdown(md, base string) template.HTML {
	return renderBody(md, base).HTML
}

// renderBody is renderMarkdown with the note of what was bounded.
func renderBody(md, base string) rendered {
	if len(md) > maxMarkdown {
		return rendered{HTML: template.HTML("<pre>" + template.HTMLEscapeString(md) + "</pre>"), Note: noteLong}
	}
	src := []byte(md)
	m := markdown()
	pc := parser.NewContext()
	doc := m.Parser().Parse(text.NewReader(src), parser.WithContext(pc))
	if base != "" {
		rebase(doc, base)
	}
	var buf bytes.Buffer
	if err := m.Renderer().Render(&buf, src, doc); err != nil {
		return rendered{HTML: template.HTML("<pre>" + template.HTMLEscapeString(md) + "</pre>")}
	}
	var notes []string
	if pc.Get(nestedKey) != nil {
		notes = append(notes, noteNested)
	}
	if pc.Get(manyKey) != nil {
		notes = append(notes, noteLinks)
	}
	return rendered{HTML: template.HTML(buf.String()), Note: strings.Join(notes, " ")}
}

// rebase resolves the relative links of doc against base. Images are
// left as written: a file's page is HTML, and the catalog serves no
// file's bytes as they are (from its own origin, a skill's script or page
// would run as the catalog's).
func rebase(doc ast.Node, base string) {
	b, err := url.Parse(base)
	if err != nil {
		return
	}
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if l, ok := n.(*ast.Link); ok && entering {
			l.Destination = rebased(b, l.Destination)
		}
		return ast.WalkContinue, nil
	})
}

// rebased is dest resolved against base where dest is a path relative
// to the page (no scheme, host or leading slash; not a bare #fragment)
// that stays below base; else dest as it is.
func rebased(base *url.URL, dest []byte) []byte {
	u, err := url.Parse(strings.TrimSpace(string(util.URLEscape(dest, true))))
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" || u.Path == "" || strings.HasPrefix(u.Path, "/") {
		return dest
	}
	r := base.ResolveReference(u)
	if !strings.HasPrefix(r.Path, base.Path) {
		return dest
	}
	return []byte(r.String())
}

// safeURL returns dest as it may appear in a page: an http or https
// address, or a relative one, that parses; ok is false for any other.
func safeURL(dest []byte) (string, bool) {
	raw := strings.TrimSpace(string(util.URLEscape(dest, true)))
	if raw == "" {
		return "", false
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		if u.Opaque != "" {
			return "", false
		}
	default:
		return "", false
	}
	return u.String(), true
}

// safeLinks renders links, autolinks and images under safeURL's policy,
// and task list boxes as nothing.
type safeLinks struct{}

func (safeLinks) RegisterFuncs(r renderer.NodeRendererFuncRegisterer) {
	r.Register(ast.KindLink, renderLink)
	r.Register(ast.KindAutoLink, renderAutoLink)
	r.Register(ast.KindImage, renderImage)
	r.Register(gfm.KindTaskCheckBox, func(util.BufWriter, []byte, ast.Node, bool) (ast.WalkStatus, error) {
		return ast.WalkContinue, nil
	})
}

// openLink writes <a> for href with its title; not ok, nothing: the
// link's text stays, as plain text.
func openLink(w util.BufWriter, href string, title []byte) {
	w.WriteString(`<a href="`)
	w.Write(util.EscapeHTML([]byte(href)))
	w.WriteString(`" rel="nofollow"`)
	if title != nil {
		w.WriteString(` title="`)
		html.DefaultWriter.Write(w, title)
		w.WriteByte('"')
	}
	w.WriteByte('>')
}

func renderLink(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Link)
	href, ok := safeURL(n.Destination)
	switch {
	case !ok:
	case entering:
		openLink(w, href, n.Title)
	default:
		w.WriteString("</a>")
	}
	return ast.WalkContinue, nil
}

func renderAutoLink(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.AutoLink)
	label := util.EscapeHTML(n.Label(source))
	// An e-mail address stays text: mailto: is not an allowed scheme.
	href, ok := "", false
	if n.AutoLinkType != ast.AutoLinkEmail {
		href, ok = safeURL(n.URL(source))
	}
	if !ok {
		w.Write(label)
		return ast.WalkContinue, nil
	}
	openLink(w, href, nil)
	w.Write(label)
	w.WriteString("</a>")
	return ast.WalkContinue, nil
}

func renderImage(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.Image)
	alt := util.EscapeHTML(plainText(n, source))
	src, ok := safeURL(n.Destination)
	if !ok {
		w.Write(alt)
		return ast.WalkSkipChildren, nil
	}
	w.WriteString(`<img src="`)
	w.Write(util.EscapeHTML([]byte(src)))
	w.WriteString(`" alt="`)
	w.Write(alt)
	w.WriteByte('"')
	if n.Title != nil {
		w.WriteString(` title="`)
		html.DefaultWriter.Write(w, n.Title)
		w.WriteByte('"')
	}
	w.WriteByte('>')
	return ast.WalkSkipChildren, nil
}

// plainText is the text below n, for an image's alt.
func plainText(n ast.Node, source []byte) []byte {
	var b []byte
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch t := c.(type) {
		case *ast.Text:
			b = append(b, t.Value(source)...)
		case *ast.String:
			b = append(b, t.Value...)
		default:
			b = append(b, plainText(c, source)...)
		}
	}
	return b
}
