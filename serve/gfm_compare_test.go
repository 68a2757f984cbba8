package serve

import (
	"bytes"
	"strings"
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

// goldmarkExtension is serve's Markdown as it was with goldmark's own
// GFM extensions (linked in this test only, never in the binary).
func goldmarkExtension() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(extension.Linkify, extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)),
			extension.Strikethrough, extension.TaskList),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(safeLinks{}, 100), util.Prioritized(goldmarkBoxes{}, 100))),
	)
}

// withGoldmarkExtension renders md as serve did with goldmark's own
// GFM extensions.
func withGoldmarkExtension(t testing.TB, md string) string {
	t.Helper()
	return convert(t, goldmarkExtension(), md)
}

func convert(t testing.TB, m goldmark.Markdown, md string) string {
	var buf bytes.Buffer
	if err := m.Convert([]byte(md), &buf); err != nil {
		t.Fatalf("goldmark's extension on %q: %v", md, err)
	}
	return buf.String()
}

// gfmCorpus is Markdown on which serve's GFM renders as goldmark's
// extension did: the GFM specification's examples of tables, task
// lists, strikethrough and bare links, and what SKILL.md files hold.
var gfmCorpus = []string{
	"| foo | bar |\n| --- | --- |\n| baz | bim |",
	"| abc | defghi |\n:-: | -----------:\nbar | baz",
	"| f\\|oo  |\n| ------ |\n| b `\\|` az |\n| b **\\|** im |",
	"| abc | def |\n| --- | --- |\n| bar | baz |\n> bar",
	"| abc | def |\n| --- | --- |\n| bar | baz |\nbar\n\nbar",
	"| abc | def |\n| --- |\n| bar |",
	"| abc | def |\n| --- | --- |\n| bar |\n| bar | baz | boo |",
	"| abc | def |\n| --- | --- |",
	"a|b\n-|-\n1|2",
	"|a|\n|-|",
	"a\n:-",
	"| a |\n| :---- |\n| b |",
	"| a |\n| : - |",
	"| a | b | c |\n|:--|:-:|--:|\n| 1 | 2 | 3 |\n| *x* | `y` | [z](https://e.org/z) |",
	"x\n| a |\n| - |\n| b |\nc\n\nd",
	"> | a |\n> | - |\n> | b |\nc",
	"   | a |\n   | - |",
	"    | a |\n| - |",
	"| a |\n| - |\n| b |\n---",
	"- | a |\n  | -: |\n  | 1 |",
	"| Command | What it does |\n|---------|--------------|\n| `skillsync sync` | Syncs skills |\n| `skillsync list` | Lists them, see https://e.org/docs. |",
	"| <img src=x onerror=alert(1)> |\n|---|\n| [x](javascript:1) |",
	"- [ ] foo\n- [x] bar",
	"- [x] foo\n  - [ ] bar\n  - [x] baz\n- [ ] bim",
	"- [X] a\n- [\t] b\n1. [x] c",
	"-  [x]   a",
	"- a\n  [x] b",
	"- > [x] a",
	"- [x] a\n\n  b",
	"[x] a",
	"- [y] a",
	"~~Hi~~ Hello, ~there~ world!",
	"This ~~has a\n\nnew paragraph~~.",
	"This will ~~~not~~~ strike.",
	"a~~b~~c ~~ a~~ *~~a~~* ~~*a*~~ `~~a~~`",
	"www.commonmark.org",
	"Visit www.commonmark.org/help for more information.",
	"Visit www.commonmark.org.\n\nVisit www.commonmark.org/a.b.",
	"www.google.com/search?q=Markup+(business)\n\nwww.google.com/search?q=Markup+(business)))\n\n(www.google.com/search?q=Markup+(business))\n\n(www.google.com/search?q=Markup+(business)",
	"www.google.com/search?q=(business))+ok",
	"www.google.com/search?q=commonmark&hl=en\n\nwww.google.com/search?q=commonmark&hl;",
	"www.commonmark.org/he<lp",
	"http://commonmark.org\n\n(Visit https://encrypted.google.com/search?q=Markup+(business))\n\nAnonymous FTP is available at ftp://foo.bar.baz.",
	"foo@bar.baz\n\nhello@mail+xyz.example isn't valid, but hello+xyz@mail.example is.",
	"*www.a.b* _www.a.b_ ~~www.a.b~~ (www.a.b) **https://a.b/c**",
	"xwww.a.b 1http://a.b www.x www. www.x. https:// https://a http://localhost:8080/",
	"www.a.b/x?!.,:*_~ www.a.b/x))) www.a.b/(x) www.a.b/x&amp; www.a.b/x&amp www.a.b/x; www.a.b/x'\"",
	"[www.a.b](http://x) `www.a.b` <http://a.b/www.c.d>",
	"see www.example.com/p and https://example.com/a?b=1&c=2#d, then stop.",
	"www.x.example/\"><script>alert(1)</script>",
	"---\nname: pdf\ndescription: Work with PDF files\n---\n\n# PDF\n\n## Steps\n\n1. Read the file with `pdftotext`.\n2. See https://example.com/pdf for the format.\n\n| Tool | Use |\n|:-----|----:|\n| pdftotext | text |\n| qpdf | ~~split~~ merge |\n\n- [ ] check fonts\n- [x] check pages\n",
}

// serve's GFM renders the corpus as goldmark's extension did, with the
// same link policy.
func TestGFMMatchesGoldmarkExtension(t *testing.T) {
	t.Parallel()
	for _, md := range gfmCorpus {
		if got, want := string(renderMarkdown(md, "")), withGoldmarkExtension(t, md); got != want {
			t.Errorf("%q renders as\n%q, goldmark's extension as\n%q", md, got, want)
		}
	}
}

// Where goldmark's extension departs from the GFM specification (or
// cmark-gfm, its reference implementation), serve follows GFM.
func TestGFMWhereGoldmarkExtensionDiffers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ why, md, want string }{
		{"a header row must have as many cells as the delimiter row", "| a\\\\|b |\n|-|-|", "<p>| a\\|b |\n|-|-|</p>\n"},
		{"strikethrough runs must be of the same length", "~d~~\n\n~~a~", "<p>~d~~</p>\n<p>~~a~</p>\n"},
		{"a task list marker is followed by white space", "- [ ]x", "<ul>\n<li>[ ]x</li>\n</ul>\n"},
		{"no underscore in a domain's last two segments", "www.a_b.c", "<p>www.a_b.c</p>\n"},
		{"a bare link's path runs to white space or <", "www.a.b:80/x http://a.b/c\\d",
			`<p><a href="http://www.a.b:80/x" rel="nofollow">www.a.b:80/x</a> <a href="http://a.b/c%5Cd" rel="nofollow">http://a.b/c\d</a></p>` + "\n"},
		{"a scheme in any case", "HTTP://a.b/c", `<p><a href="http://a.b/c" rel="nofollow">HTTP://a.b/c</a></p>` + "\n"},
	} {
		if got := string(renderMarkdown(c.md, "")); got != c.want {
			t.Errorf("%s: %q renders as\n%q, want\n%q", c.why, c.md, got, c.want)
		}
	}
}

// A page's GFM by serve's extensions and by goldmark's: a corpus of
// the GFM examples and a SKILL.md, eight times over.
func BenchmarkGFM(b *testing.B) {
	md := strings.Repeat(strings.Join(gfmCorpus, "\n\n")+"\n\n", 8)
	b.Run("serve", func(b *testing.B) {
		b.SetBytes(int64(len(md)))
		for b.Loop() {
			renderMarkdown(md, "")
		}
	})
	b.Run("goldmark-extension", func(b *testing.B) {
		m := goldmarkExtension()
		b.SetBytes(int64(len(md)))
		for b.Loop() {
			convert(b, m, md)
		}
	})
}
