package serve

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// Every way Markdown has to put an address in a page keeps only http(s)
// and relative addresses, with rel="nofollow" on links; the text of what
// is refused stays as text; raw HTML never reaches the page.
func TestMarkdownKeepsOnlySafeAddresses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ md, want, refused string }{
		{"[a](https://example.com/x)", `<a href="https://example.com/x" rel="nofollow">a</a>`, ""},
		{"[a](guide/one.md#part)", `<a href="guide/one.md#part" rel="nofollow">a</a>`, ""},
		{`[a](https://e.org "say \"hi\"")`, `<a href="https://e.org" rel="nofollow" title="say &quot;hi&quot;">a</a>`, ""},
		{"[a](javascript:alert(1))", "<p>a</p>", "javascript"},
		{"[a](JavaScript:alert(1))", "<p>a</p>", "javascript"},
		{"[a](javascript&#58;alert(1))", "<p>a</p>", "alert"},
		{"[a](jav&#x09;ascript:alert(1))", "<p>a</p>", "alert"},
		{"[a](vbscript:msgbox)", "<p>a</p>", "vbscript"},
		{"[a](data:text/html,x)", "<p>a</p>", "data:"},
		{"[a](mailto:a@b.c)", "<p>a</p>", "mailto"},
		{"[a][r]\n\n[r]: javascript:alert(1)", "<p>a</p>", "javascript"},
		{"<javascript:alert(1)>", "<p>javascript:alert(1)</p>", "href"},
		{"<https://e.org/a?b=1&c=2>", `<a href="https://e.org/a?b=1&amp;c=2" rel="nofollow">https://e.org/a?b=1&amp;c=2</a>`, ""},
		{"see www.example.com/p", `<a href="http://www.example.com/p" rel="nofollow">www.example.com/p</a>`, ""},
		{"write to a@b.org", "<p>write to a@b.org</p>", "mailto"},
		{"![logo *x*](https://e.org/l.png)", `<img src="https://e.org/l.png" alt="logo x">`, ""},
		{"![x](data:image/png;base64,AAAA)", "<p>x</p>", "data:"},
		{"![x](javascript:alert(1))", "<p>x</p>", "javascript"},
		{`<img src=x onerror="alert(1)">`, "raw HTML omitted", "onerror"},
		{"<script>alert(1)</script>", "raw HTML omitted", "<script"},
		{`<a href="javascript:alert(1)">x</a>`, "raw HTML omitted", "javascript"},
		{"- [x] done\n- [ ] todo", "<li>done</li>\n<li>todo</li>", "<input"},
		{"| a | b |\n|:--|--:|\n| 1 | 2 |", `<td align="left">1</td>`, "style="},
		{"~~gone~~ `x<y`", "<del>gone</del> <code>x&lt;y</code>", ""},
		// What a reviewer tried on the renderer without bluemonday: each
		// stays refused, escaped or left out.
		{"[a](&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1))", "<p>a</p>", "alert"},
		{"[a](javascript&colon;alert(1))", "<p>a</p>", "alert"},
		{"[a](&#x6A;avascript:alert(1))", "<p>a</p>", "alert"},
		{"[a]( \tjavascript:alert(1))", "<p>a</p>", "alert"},
		{"[a](&#x1;javascript:alert(1))", "<p>a</p>", "alert"},
		{"[a](&#xFEFF;javascript:alert(1))", "<p>a</p>", "alert"},
		{"[a](<java script:alert(1)>)", "<p>a</p>", "alert"},
		{"[a](\\javascript:alert(1))", "<p>a</p>", "alert"},
		{"[a](javascript%3Aalert(1))", `href="javascript%3Aalert(1)"`, "javascript:"},
		{"[a](\\\\evil.example)", `href="%5Cevil.example"`, `href="\\`},
		{"[a](vbscript&colon;x)", "<p>a</p>", "vbscript"},
		{"[a](data&colon;text/html,x)", "<p>a</p>", "data:"},
		{`[a](https://x/&quot;onmouseover=&quot;alert(1))`, `href="https://x/%22onmouseover=%22alert(1)"`, `" onmouseover`},
		{`[a](http://x "a&quot; onmouseover=&#x22;alert(1)")`, `title="a&quot; onmouseover=&quot;alert(1)"`, `" onmouseover`},
		{"[a][r]\n\n[r]: <javascript:alert(1)> \"t\"", "<p>a</p>", "javascript"},
		{`![a"b](http://x/a.png "t&quot;>")`, `alt="a&quot;b" title="t&quot;&gt;"`, `"a"b`},
		{"![<img src=x onerror=alert(1)>](http://x/a.png)", `alt=""`, "onerror"},
		{"![`<b \"x\">`](http://x/a.png)", `alt="&lt;b &quot;x&quot;&gt;"`, "<b"},
		{"![x](javascript:alert(1) \"t\")", "<p>x</p>", "javascript"},
		{"![x](data:image/svg+xml;base64,PHN2Zz4=)", "<p>x</p>", "data:"},
		{"<JAVASCRIPT:alert(1)>", "<p>JAVASCRIPT:alert(1)</p>", "href"},
		{"<vbscript:msgbox>", "<p>vbscript:msgbox</p>", "href"},
		{"<mailto:a@b.c>", "<p>mailto:a@b.c</p>", "href"},
		{"www.x.example/\"><script>alert(1)</script>", `href="http://www.x.example/%22%3E"`, "<script"},
		{"http://x/\"onmouseover=\"alert(1)", "http://x/&quot;onmouseover", "<a"},
		{"<pre>\n<script>alert(1)</script>\n</pre>", "raw HTML omitted", "<script"},
		{"<style>*{color:red}</style>", "raw HTML omitted", "<style"},
		{"<!-- x --><?php x ?><!DOCTYPE x><![CDATA[<img src=x onerror=alert(1)>]]>", "raw HTML omitted", "onerror"},
		{"<custom-el onclick=alert(1)>", "raw HTML omitted", "onclick"},
		{"a <span onclick=alert(1)>x</span> </p><script>alert(1)</script>", "raw HTML omitted", "<s"},
		{"# h {#x onclick=\"alert(1)\"}", "<h1>h {#x onclick=&quot;alert(1)&quot;}</h1>", "<h1 "},
		{"```\"><script>alert(1)</script>\nx\n```", `class="language-&quot;&gt;&lt;script&gt;`, "<script"},
		{"---\ntitle: <script>alert(1)</script>\n---\n", "raw HTML omitted", "<script"},
		{"a[^1]\n\n[^1]: <javascript:alert(1)>", "<p>a", "javascript:"},
		{"| <img src=x onerror=alert(1)> |\n|---|\n| [x](javascript:1) |", "<td>x</td>", "onerror"},
		{"- [x] <img src=x onerror=alert(1)>", "<li>", "<input"},
	} {
		got := string(renderMarkdown(c.md, ""))
		if !strings.Contains(got, c.want) {
			t.Errorf("%q renders as %q, want it to hold %q", c.md, got, c.want)
		}
		rebased := string(renderMarkdown(c.md, "/skills/x/files/"))
		for _, out := range []string{got, rebased} {
			if c.refused != "" && strings.Contains(strings.ToLower(out), c.refused) {
				t.Errorf("%q renders as %q, which keeps %q", c.md, out, c.refused)
			}
		}
	}
}

// Whatever the Markdown, the rendered HTML parses to elements and
// attributes of a short list, with no comment but goldmark's own and
// no address with a scheme other than http(s): checked by an HTML
// parser rather than by looking for strings. The seeds run with go
// test; go test -fuzz FuzzMarkdownStaysInert ./serve looks further.
func FuzzMarkdownStaysInert(f *testing.F) {
	for _, md := range []string{
		"[a](javascript:alert(1))", "[a](&#106;avascript&colon;alert(1))", "[a](http://x 'a\" onmouseover=\"x')",
		"![a\"b<c>&quot;](http://x/a.png \"t&quot;>\")", "![<img src=x onerror=alert(1)>](http://x)",
		"[a][r]\n\n[r]: http://x \"a&quot;>\n<script>alert(1)</script>\"",
		"<javascript:alert(1)>", "www.x.example/\"><script>alert(1)</script>", "x@y.example\"onmouseover=alert(1)",
		"<div onclick=alert(1)>\n\n*x*\n\n</div>", "a <img src=x onerror=alert(1)> <!-- c --> <?p?> <![CDATA[x]]>",
		"```\"><img src=x onerror=alert(1)>\nx\n```", "# h {onclick=alert(1)}",
		"| a |\n|:-:|\n| <b onclick=x>y</b> |", "- [x] a\n- [ ] <input onfocus=x autofocus>",
		"[a](//evil.example) [b](\\\\evil.example) [c](https:\\\\evil.example)",
		"| `a\\|<b>` | www.x.y/(\"><i>) |\n|:-|--:|\n| ~~x~~ | [y](javascript:1) |", "~~a [b~~](javascript:1) c~~ ~x~~ ~~y~",
		"*www.x.y/<script>* _http://x.y/\"onclick=\"a_ (https://x.y/a&quot;b)) www.x.y/&lt;;",
	} {
		f.Add(md)
	}
	f.Fuzz(func(t *testing.T, md string) {
		// As written, and with relative links rebased onto a skill's files
		// (a name that needs escaping), as a skill's page renders them.
		for _, base := range []string{"", "/skills/a%23b%20c/files/"} {
			out := string(renderMarkdown(md, base))
			if problems := inertProblems(out); len(problems) > 0 {
				t.Errorf("%q with base %q renders as %q: %v", md, base, out, problems)
			}
		}
	})
}

var inertElements = map[string]bool{
	"html": true, "head": true, "body": true, "p": true, "a": true, "img": true, "em": true, "strong": true, "code": true,
	"pre": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "ul": true, "ol": true, "li": true,
	"blockquote": true, "hr": true, "br": true, "table": true, "thead": true, "tbody": true, "tr": true, "th": true,
	"td": true, "del": true,
}

// inertProblems is what of out is not inert, as a browser would parse it.
func inertProblems(out string) []string {
	doc, err := html.Parse(strings.NewReader(out))
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	for n := range doc.Descendants() {
		switch n.Type {
		case html.CommentNode:
			if n.Data != " raw HTML omitted " {
				problems = append(problems, "comment "+n.Data)
			}
		case html.ElementNode:
			if !inertElements[n.Data] {
				problems = append(problems, "element "+n.Data)
			}
			for _, a := range n.Attr {
				switch a.Key {
				case "href", "src":
					// As a browser reads it: without tabs, newlines
					// and leading controls or spaces.
					v := strings.ToLower(strings.Map(func(r rune) rune {
						if r <= ' ' {
							return -1
						}
						return r
					}, a.Val))
					if i := strings.IndexAny(v, ":/?#"); i >= 0 && v[i] == ':' && !strings.HasPrefix(v, "http:") && !strings.HasPrefix(v, "https:") {
						problems = append(problems, a.Key+" "+a.Val)
					}
				case "alt", "title", "start":
				case "rel":
					if a.Val != "nofollow" {
						problems = append(problems, "rel "+a.Val)
					}
				case "align":
					if a.Val != "left" && a.Val != "right" && a.Val != "center" {
						problems = append(problems, "align "+a.Val)
					}
				case "class":
					if n.Data != "code" || !strings.HasPrefix(a.Val, "language-") {
						problems = append(problems, "class "+a.Val)
					}
				default:
					problems = append(problems, "attribute "+a.Key+"="+a.Val)
				}
			}
		}
	}
	return problems
}

// A body longer than maxMarkdown is shown as text: goldmark's core is
// worse than linear on some inputs even with boundedParser's bounds
// (link reference definitions, one a line: 50 ms at 64 KiB, a second
// at 256 KiB), and a megabyte of them would take many seconds.
func TestLongMarkdownIsText(t *testing.T) {
	t.Parallel()
	md := strings.Repeat("[a](", maxMarkdown/4+1) + "<script>alert(1)</script>"
	got := string(renderMarkdown(md, ""))
	if !strings.HasPrefix(got, "<pre>[a]([a](") || !strings.HasSuffix(got, "&lt;script&gt;alert(1)&lt;/script&gt;</pre>") {
		t.Errorf("a body of %d bytes renders as %.80q...", len(md), got)
	}
	if note := renderBody(md, "").Note; note != noteLong {
		t.Errorf("a body of %d bytes has the note %q", len(md), note)
	}
	if got := renderMarkdown(strings.Repeat("a", maxMarkdown-4)+" *b*", ""); !strings.HasSuffix(string(got), "<em>b</em></p>\n") {
		t.Errorf("a body of maxMarkdown bytes is no longer Markdown: ...%q", got[len(got)-40:])
	}
}

// 64 KiB of what makes tables, strikethrough, task list markers and
// bare links work hardest renders in time about linear in its length
// (no worse than ten times the time of a quarter of it, where linear
// is four and quadratic sixteen), into output of bounded length, and
// stays inert. Not parallel: the times are the process's CPU time,
// taken with the package's other tests paused. (goldmark's core has
// inputs worse than linear: boundedParser bounds those that cost most,
// nested containers and link ends, as TestNestingIsBounded and
// TestLinkEndsAreBounded check; maxMarkdown bounds the rest, and
// BenchmarkRenderHostile times them.)
func TestHostileGFMIsLinearAndInert(t *testing.T) {
	fill := func(prefix, unit string) func(int) string {
		return func(n int) string { return prefix + strings.Repeat(unit, (n-len(prefix))/len(unit)) }
	}
	for _, c := range []struct {
		name string
		md   func(n int) string
	}{
		{"a wide header over one-byte rows", func(n int) string {
			return strings.Repeat("|h", n/8) + "\n" + strings.Repeat("|-", n/8) + "\n" + strings.Repeat("x\n", n/4-1)
		}},
		{"a row of pipes", fill("|a|\n|-|\n", "|")},
		{"a row of escaped pipes", fill("|a|\n|-|\n", `\|`)},
		{"escaped pipes in code", fill("|a|\n|-|\n|`", `\|`)},
		{"delimiter rows", fill("", "|-|:-:|\n")},
		{"header candidates", fill("", "|a|b|\n|-|\n")},
		{"cells of links", fill("| a | b |\n|:-|-:|\n", "| javascript:alert(1) | www.x.y/\"><script>alert(1)</script> |\n")},
		{"cells of raw HTML", fill("| a |\n|:-:|\n", "| <td style=\"x\" onclick=alert(1)> |\n")},
		{"tildes that wait", fill("", "~~a~ ")},
		{"tildes that wait, the other way", fill("", "~a~~ ")},
		{"openers then closers", func(n int) string { return strings.Repeat("~a ", n/6) + strings.Repeat("b~~ ", n/8) }},
		{"a run of tildes", fill("a ", "~")},
		{"tildes in a word", fill("", "a~~a~")},
		{"bare links", fill("", "www.a.b ")},
		{"closing parentheses", fill("www.a.b/", ")")},
		{"opening parentheses", fill("www.a.b/", "(")},
		{"entity-like endings", fill("www.a.b/", "&a;")},
		{"trailing punctuation", fill("http://a.b/", ".,:*_~?!")},
		{"a long domain", fill("www.", "a.")},
		{"underscored domains", fill("", "www.a_b.c_d ")},
		{"delimiters before links", fill("", "*_~www.a.b~_* ")},
		{"brackets around links", fill("", "[www.a.b ")},
		{"scripts after links", fill("", "http://a.b/<script>alert(1)</script> ")},
		{"link candidates with a bad domain after _", fill("", "_www.x")},
		{"link candidates with a bad domain after ~", fill("", "~www.")},
		{"link candidates with a bad domain after *", fill("", "*www.x")},
		{"link candidates with a bad domain after (", fill("", "(www.")},
		{"schemes with no domain after (", fill("", "(http://")},
		{"domains valid only once trimmed", fill("", "(www.a.b_/")},
		{"padded centred cells", func(n int) string {
			head := strings.Repeat("|h", 1000) + "\n" + strings.Repeat("|:-:", 1000) + "\n" + strings.Repeat("x\n", 66)
			return head + strings.Repeat(strings.Repeat("|", 1001)+"\n", (n-len(head))/1002)
		}},
		{"task markers", fill("", "- [x] [ ] [x]\n")},
		{"nested task lists", fill("", "- [x] - [ ] ")},
	} {
		md := c.md(maxMarkdown)
		if len(md) > maxMarkdown {
			t.Fatalf("%s: %d bytes, more than maxMarkdown", c.name, len(md))
		}
		start := cpuTime()
		out := string(renderMarkdown(md, ""))
		large := cpuTime() - start
		if problems := inertProblems(out); len(problems) > 0 {
			t.Errorf("%s renders what is not inert: %q", c.name, problems[:min(len(problems), 5)])
		}
		if strings.Contains(strings.ToLower(out), "style=") {
			t.Errorf("%s renders a style attribute", c.name)
		}
		if len(out) > 2<<20 {
			t.Errorf("%s: %d bytes render as %d", c.name, len(md), len(out))
		}
		// One rendering of each size, the full one timed above; three
		// more of each at worst, keeping the least: a busy machine can
		// slow a measure, never speed it up. (Under -race every
		// rendering is several times slower: they add up.)
		quarter := c.md(maxMarkdown / 4)
		small := cpuOf(quarter)
		for try := 0; try < 3 && large >= 100*time.Millisecond && large >= 10*small; try++ {
			large, small = min(large, cpuOf(md)), min(small, cpuOf(quarter))
		}
		if large >= 100*time.Millisecond && large >= 10*small {
			t.Errorf("%s: %d bytes take %v, a quarter of them %v", c.name, len(md), large, small)
		}
	}
}

// cpuOf is the CPU time of one rendering of md.
func cpuOf(md string) time.Duration {
	start := cpuTime()
	renderMarkdown(md, "")
	return cpuTime() - start
}

// TestRebaseLinksNotImages: on a skill's page a relative link opens the
// skill's file page; a relative image is left as written, as the catalog
// serves no file's bytes as they are. A link out of the skill's files,
// an absolute path and a fragment stay as written too.
func TestRebaseLinksNotImages(t *testing.T) {
	t.Parallel()
	got := string(renderMarkdown("[g](references/g.md) ![d](d.png) [up](../../x) [abs](/etc) [frag](#a)", "/skills/pdf/files/"))
	for _, want := range []string{`href="/skills/pdf/files/references/g.md"`, `src="d.png"`, `href="../../x"`, `href="/etc"`, `href="#a"`} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered %s, want it to hold %s", got, want)
		}
	}
}
