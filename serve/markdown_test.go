package serve

import (
	"strings"
	"testing"
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
	} {
		got := string(renderMarkdown(c.md))
		if !strings.Contains(got, c.want) {
			t.Errorf("%q renders as %q, want it to hold %q", c.md, got, c.want)
		}
		if c.refused != "" && strings.Contains(strings.ToLower(got), c.refused) {
			t.Errorf("%q renders as %q, which keeps %q", c.md, got, c.refused)
		}
	}
}
