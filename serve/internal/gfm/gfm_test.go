package gfm

import (
	"bytes"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

func render(t *testing.T, md string) string {
	t.Helper()
	var buf bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(Extension{})).Convert([]byte(md), &buf); err != nil {
		t.Fatalf("%q: %v", md, err)
	}
	return buf.String()
}

type example struct{ name, md, want string }

func check(t *testing.T, examples []example) {
	t.Helper()
	for _, e := range examples {
		if got := render(t, e.md); got != e.want {
			t.Errorf("%s: %q renders as\n%q, want\n%q", e.name, e.md, got, e.want)
		}
	}
}

// Tables as the GFM specification's examples and the edges around
// them: alignment as align="", escaped pipes (in code too), rows with
// fewer or more cells than the header, what ends a table, what is no
// table.
func TestTables(t *testing.T) {
	t.Parallel()
	check(t, []example{
		{"spec 198", "| foo | bar |\n| --- | --- |\n| baz | bim |",
			"<table>\n<thead>\n<tr>\n<th>foo</th>\n<th>bar</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>baz</td>\n<td>bim</td>\n</tr>\n</tbody>\n</table>\n"},
		{"spec 199: alignment, no outer pipes", "| abc | defghi |\n:-: | -----------:\nbar | baz",
			"<table>\n<thead>\n<tr>\n<th align=\"center\">abc</th>\n<th align=\"right\">defghi</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td align=\"center\">bar</td>\n<td align=\"right\">baz</td>\n</tr>\n</tbody>\n</table>\n"},
		{"left, none", "a | b\n:-- | ---\n1 | 2",
			"<table>\n<thead>\n<tr>\n<th align=\"left\">a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td align=\"left\">1</td>\n<td>2</td>\n</tr>\n</tbody>\n</table>\n"},
		{"spec 200: escaped pipes", "| f\\|oo  |\n| ------ |\n| b `\\|` az |\n| b **\\|** im |",
			"<table>\n<thead>\n<tr>\n<th>f|oo</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>b <code>|</code> az</td>\n</tr>\n<tr>\n<td>b <strong>|</strong> im</td>\n</tr>\n</tbody>\n</table>\n"},
		{"two escaped pipes in one code span", "| `a\\|b\\|c` |\n|-|",
			"<table>\n<thead>\n<tr>\n<th><code>a|b|c</code></th>\n</tr>\n</thead>\n</table>\n"},
		{"escaped pipe outside a table stays in code", "`a\\|b`", "<p><code>a\\|b</code></p>\n"},
		{"spec 201: a blockquote ends it", "| abc | def |\n| --- | --- |\n| bar | baz |\n> bar",
			"<table>\n<thead>\n<tr>\n<th>abc</th>\n<th>def</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>bar</td>\n<td>baz</td>\n</tr>\n</tbody>\n</table>\n<blockquote>\n<p>bar</p>\n</blockquote>\n"},
		{"spec 202: a line without pipes is a row, a blank line ends it", "| abc | def |\n| --- | --- |\n| bar | baz |\nbar\n\nbar",
			"<table>\n<thead>\n<tr>\n<th>abc</th>\n<th>def</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>bar</td>\n<td>baz</td>\n</tr>\n<tr>\n<td>bar</td>\n<td></td>\n</tr>\n</tbody>\n</table>\n<p>bar</p>\n"},
		{"spec 203: header and delimiter row differ", "| abc | def |\n| --- |\n| bar |",
			"<p>| abc | def |\n| --- |\n| bar |</p>\n"},
		{"spec 204: fewer cells are padded, more are dropped", "| abc | def |\n| --- | --- |\n| bar |\n| bar | baz | boo |",
			"<table>\n<thead>\n<tr>\n<th>abc</th>\n<th>def</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>bar</td>\n<td></td>\n</tr>\n<tr>\n<td>bar</td>\n<td>baz</td>\n</tr>\n</tbody>\n</table>\n"},
		{"spec 205: no body", "| abc | def |\n| --- | --- |",
			"<table>\n<thead>\n<tr>\n<th>abc</th>\n<th>def</th>\n</tr>\n</thead>\n</table>\n"},
		{"lines before the header stay a paragraph", "intro\n| a |\n| - |\n| b |",
			"<p>intro</p>\n<table>\n<thead>\n<tr>\n<th>a</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>b</td>\n</tr>\n</tbody>\n</table>\n"},
		{"inlines in cells", "| *a* | [l](http://e.org) | `c|` |\n|---|---|---|\n| ~~d~~ | www.e.org | x |",
			"<p>| <em>a</em> | <a href=\"http://e.org\">l</a> | <code>c|</code> |\n|---|---|---|\n| <del>d</del> | <a href=\"http://www.e.org\">www.e.org</a> | x |</p>\n"},
		{"inlines in cells, code without a pipe", "| *a* | [l](http://e.org) | `c` |\n|---|---|---|\n| ~~d~~ | www.e.org | x |",
			"<table>\n<thead>\n<tr>\n<th><em>a</em></th>\n<th><a href=\"http://e.org\">l</a></th>\n<th><code>c</code></th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td><del>d</del></td>\n<td><a href=\"http://www.e.org\">www.e.org</a></td>\n<td>x</td>\n</tr>\n</tbody>\n</table>\n"},
		{"an escaped backslash before a pipe still escapes it", "| a\\\\|b |\n|-|",
			"<table>\n<thead>\n<tr>\n<th>a\\|b</th>\n</tr>\n</thead>\n</table>\n"},
		{"a space inside a delimiter cell", "| a |\n| : - |", "<p>| a |\n| : - |</p>\n"},
		{"a delimiter cell without a hyphen", "| a |\n| :: |", "<p>| a |\n| :: |</p>\n"},
		{"an empty delimiter cell", "| a | b |\n| - || - |", "<p>| a | b |\n| - || - |</p>\n"},
		{"a row of one pipe is one empty cell", "| a | b |\n|---|---|\n|",
			"<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td></td>\n<td></td>\n</tr>\n</tbody>\n</table>\n"},
		{"in a list item", "- | a |\n  | -: |\n  | 1 |",
			"<ul>\n<li>\n<table>\n<thead>\n<tr>\n<th align=\"right\">a</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td align=\"right\">1</td>\n</tr>\n</tbody>\n</table>\n</li>\n</ul>\n"},
		{"indented four spaces is code", "    | a |\n    | - |", "<pre><code>| a |\n| - |\n</code></pre>\n"},
		{"raw HTML is left out, text escaped", "| <b> & \" |\n|-|",
			"<table>\n<thead>\n<tr>\n<th><!-- raw HTML omitted --> &amp; &quot;</th>\n</tr>\n</thead>\n</table>\n"},
	})
}

// Each document may pad short rows with at most maxPadding empty
// cells: a wide header over many one-byte rows would otherwise be
// millions of cells from a few kilobytes.
func TestTablePaddingIsBounded(t *testing.T) {
	t.Parallel()
	const columns = 300
	md := strings.Repeat("|h", columns) + "\n" + strings.Repeat("|-", columns) + "\n" + strings.Repeat("x\n", columns)
	out := render(t, md)
	if got := strings.Count(out, "<td></td>"); got != maxPadding {
		t.Errorf("%d empty cells, want maxPadding (%d)", got, maxPadding)
	}
	if got := strings.Count(out, "<td>x</td>"); got != columns {
		t.Errorf("%d cells of x, want %d", got, columns)
	}
	// Under the bound every short row is padded to the header's width.
	out = render(t, "|a|b|c|\n|-|-|-|\n"+strings.Repeat("x\n", 100))
	if got := strings.Count(out, "<td></td>"); got != 200 {
		t.Errorf("%d empty cells, want 200", got)
	}
}

func TestStrikethrough(t *testing.T) {
	t.Parallel()
	check(t, []example{
		{"spec 491: one or two tildes", "~~Hi~~ Hello, ~there~ world!", "<p><del>Hi</del> Hello, <del>there</del> world!</p>\n"},
		{"spec 492: not across paragraphs", "This ~~has a\n\nnew paragraph~~.", "<p>This ~~has a</p>\n<p>new paragraph~~.</p>\n"},
		{"spec 493: three tildes are text", "This will ~~~not~~~ strike.", "<p>This will ~~~not~~~ strike.</p>\n"},
		{"runs of different lengths do not match", "~a~~ ~~b~", "<p><del>a~~ ~~b</del></p>\n"},
		{"or the other way round", "~~a~ ~b~~", "<p><del>a~ ~b</del></p>\n"},
		{"a closing run of another length is text", "~~a~", "<p>~~a~</p>\n"},
		{"the matching run is the one of the same length", "~~a ~b~ c~~", "<p><del>a <del>b</del> c</del></p>\n"},
		{"within a word", "a~~b~~c", "<p>a<del>b</del>c</p>\n"},
		{"an opener before white space opens nothing", "~~ a~~", "<p>~~ a~~</p>\n"},
		{"a closer after white space closes nothing", "~~a ~~", "<p>~~a ~~</p>\n"},
		{"across a line break", "~~a\nb~~", "<p><del>a\nb</del></p>\n"},
		{"inside emphasis", "*~~a~~*", "<p><em><del>a</del></em></p>\n"},
		{"around emphasis", "~~*a*~~", "<p><del><em>a</em></del></p>\n"},
		{"in a link's text", "[~~a~~](http://e.org)", "<p><a href=\"http://e.org\"><del>a</del></a></p>\n"},
		{"not in code", "`~~a~~`", "<p><code>~~a~~</code></p>\n"},
		{"an escaped tilde", "\\~~a~~", "<p>~~a~~</p>\n"},
		{"a long run is text", "a ~~~~~~~~ b", "<p>a ~~~~~~~~ b</p>\n"},
		{"a closing run in a link's text and its opener outside", "~~a [b~~](http://e.org) c~~", "<p><del>a <a href=\"http://e.org\">b~~</a> c</del></p>\n"},
		{"a closing run in brackets that are no link", "~~a [b~~] c", "<p><del>a [b</del>] c</p>\n"},
		{"raw HTML in it is left out", "~~<b>~~", "<p><del><!-- raw HTML omitted --></del></p>\n"},
		{"a lone tilde", "~", "<p>~</p>\n"},
	})
}

// maxOpenTildes runs may wait in one block; the next cannot open, and
// the bound is the block's.
func TestStrikethroughOpenersAreBounded(t *testing.T) {
	t.Parallel()
	under := strings.Repeat("~x ", maxOpenTildes-1) + "~~y~~"
	if out := render(t, under); !strings.Contains(out, "<del>y</del>") {
		t.Errorf("%d waiting runs stop a strikethrough: %.60q...", maxOpenTildes-1, out[len(out)-60:])
	}
	at := strings.Repeat("~x ", maxOpenTildes) + "~~y~~"
	if out := render(t, at); strings.Contains(out, "<del>") {
		t.Errorf("%d waiting runs, and a strikethrough opens: %.60q...", maxOpenTildes, out[len(out)-60:])
	}
	if out := render(t, at+"\n\n~~z~~"); !strings.HasSuffix(out, "<p><del>z</del></p>\n") {
		t.Errorf("the bound reaches the next paragraph: %.60q...", out[len(out)-60:])
	}
	// Matched runs wait no more: many strikethroughs in one paragraph.
	if out := render(t, strings.Repeat("~~a~~ ~b~ ", 2*maxOpenTildes)); strings.Count(out, "<del>") != 4*maxOpenTildes {
		t.Errorf("%d strikethroughs render as %d", 4*maxOpenTildes, strings.Count(out, "<del>"))
	}
}

func TestTaskListMarkers(t *testing.T) {
	t.Parallel()
	check(t, []example{
		{"spec 279", "- [ ] foo\n- [x] bar", "<ul>\n<li>foo</li>\n<li>bar</li>\n</ul>\n"},
		{"spec 280: nested", "- [x] foo\n  - [ ] bar\n  - [x] baz\n- [ ] bim",
			"<ul>\n<li>foo\n<ul>\n<li>bar</li>\n<li>baz</li>\n</ul>\n</li>\n<li>bim</li>\n</ul>\n"},
		{"X, a tab, an ordered list", "1. [X] a\n2. [\t] b", "<ol>\n<li>a</li>\n<li>b</li>\n</ol>\n"},
		{"a tab after", "- [x]\ta", "<ul>\n<li>a</li>\n</ul>\n"},
		{"nothing after", "- [x]", "<ul>\n<li></li>\n</ul>\n"},
		{"loose item", "- [x] a\n\n  b", "<ul>\n<li>\n<p>a</p>\n<p>b</p>\n</li>\n</ul>\n"},
		{"a reference of the same name", "- [x] a\n\n[x]: http://e.org", "<ul>\n<li>a</li>\n</ul>\n"},
		{"no white space after", "- [x]a", "<ul>\n<li>[x]a</li>\n</ul>\n"},
		{"another letter", "- [y] a", "<ul>\n<li>[y] a</li>\n</ul>\n"},
		{"two spaces inside", "- [  ] a", "<ul>\n<li>[  ] a</li>\n</ul>\n"},
		{"not at the start", "- a [x] b", "<ul>\n<li>a [x] b</li>\n</ul>\n"},
		{"not on the first line", "- a\n  [x] b", "<ul>\n<li>a\n[x] b</li>\n</ul>\n"},
		{"not in a blockquote in the item", "- > [x] a", "<ul>\n<li>\n<blockquote>\n<p>[x] a</p>\n</blockquote>\n</li>\n</ul>\n"},
		{"not in a second paragraph", "- a\n\n  [x] b", "<ul>\n<li>\n<p>a</p>\n<p>[x] b</p>\n</li>\n</ul>\n"},
		{"not outside a list", "[x] a", "<p>[x] a</p>\n"},
		{"the rest is Markdown", "- [ ] *a* ~~b~~", "<ul>\n<li><em>a</em> <del>b</del></li>\n</ul>\n"},
	})
}

// The marker's node says whether the box is checked.
func TestTaskCheckBoxChecked(t *testing.T) {
	t.Parallel()
	md := []byte("- [ ] a\n- [x] b\n- [X] c")
	doc := goldmark.New(goldmark.WithExtensions(Extension{})).Parser().Parse(text.NewReader(md))
	var got []bool
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if box, ok := n.(*TaskCheckBox); ok && entering {
			got = append(got, box.Checked)
		}
		return ast.WalkContinue, nil
	})
	if len(got) != 3 || got[0] || !got[1] || !got[2] {
		t.Errorf("boxes checked: %v, want [false true true]", got)
	}
}

func TestLinkify(t *testing.T) {
	t.Parallel()
	a := func(href, label string) string { return `<a href="` + href + `">` + label + `</a>` }
	p := func(s string) string { return "<p>" + s + "</p>\n" }
	check(t, []example{
		{"spec 621", "www.commonmark.org", p(a("http://www.commonmark.org", "www.commonmark.org"))},
		{"spec 622", "Visit www.commonmark.org/help for more information.",
			p("Visit " + a("http://www.commonmark.org/help", "www.commonmark.org/help") + " for more information.")},
		{"spec 623: a trailing period", "Visit www.commonmark.org.\n\nVisit www.commonmark.org/a.b.",
			p("Visit "+a("http://www.commonmark.org", "www.commonmark.org")+".") + p("Visit "+a("http://www.commonmark.org/a.b", "www.commonmark.org/a.b")+".")},
		{"spec 624: parentheses", "www.google.com/search?q=Markup+(business)\n\nwww.google.com/search?q=Markup+(business)))\n\n(www.google.com/search?q=Markup+(business))\n\n(www.google.com/search?q=Markup+(business)",
			p(a("http://www.google.com/search?q=Markup+(business)", "www.google.com/search?q=Markup+(business)")) +
				p(a("http://www.google.com/search?q=Markup+(business)", "www.google.com/search?q=Markup+(business)")+"))") +
				p("("+a("http://www.google.com/search?q=Markup+(business)", "www.google.com/search?q=Markup+(business)")+")") +
				p("("+a("http://www.google.com/search?q=Markup+(business)", "www.google.com/search?q=Markup+(business)"))},
		{"spec 625: only trailing parentheses", "www.google.com/search?q=(business))+ok",
			p(a("http://www.google.com/search?q=(business))+ok", "www.google.com/search?q=(business))+ok"))},
		{"spec 626: an entity reference at the end", "www.google.com/search?q=commonmark&hl=en\n\nwww.google.com/search?q=commonmark&hl;",
			p(a("http://www.google.com/search?q=commonmark&amp;hl=en", "www.google.com/search?q=commonmark&amp;hl=en")) +
				p(a("http://www.google.com/search?q=commonmark", "www.google.com/search?q=commonmark")+"&amp;hl;")},
		{"spec 627: < ends it", "www.commonmark.org/he<lp", p(a("http://www.commonmark.org/he", "www.commonmark.org/he") + "&lt;lp")},
		{"spec 628", "http://commonmark.org\n\n(Visit https://encrypted.google.com/search?q=Markup+(business))",
			p(a("http://commonmark.org", "http://commonmark.org")) +
				p("(Visit "+a("https://encrypted.google.com/search?q=Markup+(business)", "https://encrypted.google.com/search?q=Markup+(business)")+")")},
		{"every trailing punctuation", "www.a.org/x?!.,:*_~", p(a("http://www.a.org/x", "www.a.org/x") + "?!.,:*_~")},
		{"punctuation inside stays", "www.a.org/x.y?z=1,2", p(a("http://www.a.org/x.y?z=1,2", "www.a.org/x.y?z=1,2"))},
		{"a semicolon without an entity stays", "www.a.org/x;", p(a("http://www.a.org/x;", "www.a.org/x;"))},
		{"a port and a path", "www.a.org:8080/x", p(a("http://www.a.org:8080/x", "www.a.org:8080/x"))},
		{"quotes stay", "www.a.org/'x'", p(a("http://www.a.org/'x'", "www.a.org/'x'"))},
		{"https and case", "HTTPS://A.ORG/X", p(a("HTTPS://A.ORG/X", "HTTPS://A.ORG/X"))},
		{"after a space, a tab, ( * _ ~ and at a line start", "a www.a.org\tb www.b.org\n(www.c.org) *www.d.org* _www.e.org_ ~~www.f.org~~",
			p("a " + a("http://www.a.org", "www.a.org") + "\tb " + a("http://www.b.org", "www.b.org") + "\n(" + a("http://www.c.org", "www.c.org") + ") <em>" +
				a("http://www.d.org", "www.d.org") + "</em> <em>" + a("http://www.e.org", "www.e.org") + "</em> <del>" + a("http://www.f.org", "www.f.org") + "</del>")},
		{"strong", "**https://a.org**", p("<strong>" + a("https://a.org", "https://a.org") + "</strong>")},
		{"a run of three tildes before", "a ~~~www.a.org", p("a ~~~" + a("http://www.a.org", "www.a.org"))},
		{"not after a letter, digit or other punctuation", "xwww.a.org 1http://a.org .www.a.org \"www.a.org", p("xwww.a.org 1http://a.org .www.a.org &quot;www.a.org")},
		{"a domain needs two segments", "www.a http://a http://localhost:8080/ https://", p("www.a http://a http://localhost:8080/ https://")},
		{"a trailing period is not a segment", "www.a.", p("www.a.")},
		{"no underscore in the last two segments", "www.a_b.org www.a.b_c.org http://a.b_c", p("www.a_b.org www.a.b_c.org http://a.b_c")},
		{"a trailing underscore is punctuation", "www.a.org_", p(a("http://www.a.org", "www.a.org") + "_")},
		{"an underscore before them", "www.x_y.a.org", p(a("http://www.x_y.a.org", "www.x_y.a.org"))},
		{"other schemes stay text", "ftp://a.org mailto:a@b.org javascript:alert(1)", p("ftp://a.org mailto:a@b.org javascript:alert(1)")},
		{"e-mail addresses stay text", "write to a@b.org", p("write to a@b.org")},
		{"not in a link's text", "[www.a.org](http://b.org)", p(a("http://b.org", "www.a.org"))},
		{"not in code", "`www.a.org`", p("<code>www.a.org</code>")},
		{"not in an autolink", "<http://a.org/www.b.org>", p(a("http://a.org/www.b.org", "http://a.org/www.b.org"))},
		{"backslash in the path", `http://a.org/b\c`, p(a("http://a.org/b%5Cc", `http://a.org/b\c`))},
		{"escaped in the label", "www.a.org/?a=<b", p(a("http://www.a.org/?a=", "www.a.org/?a=") + "&lt;b")},
		{"two on a line", "www.a.org www.b.org", p(a("http://www.a.org", "www.a.org") + " " + a("http://www.b.org", "www.b.org"))},
	})
}
