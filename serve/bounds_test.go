package serve

import (
	"fmt"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// containerDepth is how deep block quotes and list items nest in out,
// by its tags (a parser would stop at 512 open elements).
func containerDepth(out string) int {
	z := html.NewTokenizer(strings.NewReader(out))
	d, deepest := 0, 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			return deepest
		case html.StartTagToken:
			if name, _ := z.TagName(); string(name) == "li" || string(name) == "blockquote" {
				d++
				deepest = max(deepest, d)
			}
		case html.EndTagToken:
			if name, _ := z.TagName(); string(name) == "li" || string(name) == "blockquote" {
				d--
			}
		}
	}
}

// indented is depth list items, each on its own line, each indented
// below the one before, as people nest lists.
func indented(depth int, marker string) string {
	var b strings.Builder
	for i := range depth {
		fmt.Fprintf(&b, "%s%s item %d\n", strings.Repeat(" ", i*(len(marker)+1)), marker, i+1)
	}
	return b.String()
}

// quoted is depth block quotes, one more on each line.
func quoted(depth int) string {
	var b strings.Builder
	for i := range depth {
		fmt.Fprintf(&b, "%s quote %d\n", strings.Repeat(">", i+1), i+1)
	}
	return b.String()
}

// Block quotes and list items nest at most maxNesting deep, however the
// Markdown nests them (markers on one line, indentation, both); a
// marker deeper is text, and the note says so. Nesting people write
// renders as it did, with no note.
func TestNestingIsBounded(t *testing.T) {
	t.Parallel()
	if !strings.Contains(noteNested, fmt.Sprint(maxNesting)) || !strings.Contains(noteLinks, fmt.Sprint(maxLinkEnds)) {
		t.Errorf("the notes do not name the bounds: %q, %q", noteNested, noteLinks)
	}
	for _, c := range []struct {
		name, md string
		depth    int    // of the HTML
		text     string // what is left as text, escaped
		bounded  bool   // whether the note says a marker was too deep
	}{
		{"ten list levels", indented(10, "-"), 10, "", false},
		{"ten ordered levels", indented(10, "1."), 10, "", false},
		{"ten quotes", quoted(10), 10, "", false},
		{"lists in quotes", "> - > 1. > + > * a\n", 8, "", false},
		{"as deep as allowed", strings.Repeat("- ", maxNesting) + "a", maxNesting, "", false},
		{"items as deep as allowed", indented(maxNesting, "-") + strings.Repeat(" ", 2*maxNesting-2) + "- sibling\n", maxNesting, "<li>sibling</li>", false},
		{"bullets on a line", strings.Repeat("- ", 30000) + "a", maxNesting, strings.Repeat("- ", 100), true},
		{"pluses on a line", strings.Repeat("+ ", 30000) + "a", maxNesting, strings.Repeat("+ ", 100), true},
		{"numbers on a line", strings.Repeat("1. ", 20000) + "a", maxNesting, strings.Repeat("1. ", 100), true},
		{"quotes on a line", strings.Repeat("> ", 30000) + "a", maxNesting, strings.Repeat("&gt; ", 100), true},
		{"bare quotes", strings.Repeat(">", 60000), maxNesting, strings.Repeat("&gt;", 100), true},
		{"quoted lists", strings.Repeat("> - ", 15000) + "a", maxNesting, strings.Repeat("&gt; - ", 100), true},
		{"listed quotes", strings.Repeat("- > ", 15000) + "a", maxNesting, strings.Repeat("- &gt; ", 100), true},
		{"forty list levels", indented(40, "-"), maxNesting, "- item 17", true},
		{"forty quotes", quoted(40), maxNesting, "&gt; quote 17", true},
		{"deep, then lazy lines", strings.Repeat("> ", 1000) + "a\n" + strings.Repeat("b\n", 1000), maxNesting, "b\nb\nb", true},
	} {
		got := renderBody(c.md, "")
		if d := containerDepth(string(got.HTML)); d != c.depth {
			t.Errorf("%s: nested %d deep, want %d", c.name, d, c.depth)
		}
		if !strings.Contains(string(got.HTML), c.text) {
			t.Errorf("%s: no %.40q... as text in %.300q...", c.name, c.text, got.HTML)
		}
		if c.bounded != (got.Note == noteNested) {
			t.Errorf("%s: note %q", c.name, got.Note)
		}
		if problems := inertProblems(string(got.HTML)); len(problems) > 0 {
			t.Errorf("%s renders what is not inert: %q", c.name, problems[:min(len(problems), 5)])
		}
	}
}

// A paragraph (or heading, or cell) ends at most maxLinkEnds links;
// past them its brackets are text, and the note says so. Links in
// blocks of their own are each a block's.
func TestLinkEndsAreBounded(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, md string
		links    int
		note     string
	}{
		{"a paragraph of links", strings.Repeat("[a](https://e.org/) ", maxLinkEnds+50), maxLinkEnds, noteLinks},
		{"images too", strings.Repeat("![a](https://e.org/i.png) ", maxLinkEnds+50), maxLinkEnds, noteLinks},
		{"as many as allowed", strings.Repeat("[a](https://e.org/) ", maxLinkEnds), maxLinkEnds, ""},
		{"links in list items", strings.Repeat("- [a](https://e.org/)\n", maxLinkEnds+50), maxLinkEnds + 50, ""},
		{"links in paragraphs", strings.Repeat("[a](https://e.org/)\n\n", maxLinkEnds+50), maxLinkEnds + 50, ""},
		{"links in cells", "| a | b |\n|---|---|\n" + strings.Repeat("| [a](https://e.org/) | [b](https://e.org/) |\n", maxLinkEnds), 2 * maxLinkEnds, ""},
		{"brackets that open links", strings.Repeat("[a](", 16000), 0, noteLinks},
	} {
		got := renderBody(c.md, "")
		out := string(got.HTML)
		if n := strings.Count(out, "<a ") + strings.Count(out, "<img "); n != c.links {
			t.Errorf("%s: %d links, want %d", c.name, n, c.links)
		}
		if c.note != "" && !strings.Contains(out, "[a](https://e.org/)") && !strings.Contains(out, "](https://e.org/i.png)") && !strings.Contains(out, "[a]([a](") {
			t.Errorf("%s: the links past the bound are not text: ...%.200q", c.name, out[max(0, len(out)-200):])
		}
		if got.Note != c.note {
			t.Errorf("%s: note %q, want %q", c.name, got.Note, c.note)
		}
	}
}

// BenchmarkRenderHostile renders 64 KiB bodies (maxMarkdown) of what
// makes goldmark's core work hardest, and reports the CPU time of a
// rendering (cpu-ms/op): go test ./serve -run '^$' -bench RenderHostile
// -benchtime 3x. Before the bounds of boundedParser the block markers
// took one to three seconds each, the links up to one and a half.
func BenchmarkRenderHostile(b *testing.B) {
	fill := func(unit, end string) string {
		return strings.Repeat(unit, (maxMarkdown-len(end))/len(unit)) + end
	}
	for _, c := range []struct{ name, md string }{
		{"bullets", fill("- ", "a")},
		{"pluses", fill("+ ", "a")},
		{"numbers", fill("1. ", "a")},
		{"quotes", fill("> ", "a")},
		{"bare-quotes", fill(">", "")},
		{"quoted-lists", fill("> - ", "a")},
		{"listed-quotes", fill("- > ", "a")},
		{"deep-then-lazy", strings.Repeat("> ", 1000) + "a\n" + fill("b\n", "")[2002:]},
		{"link-openers", fill("[a](", "")},
		{"link-openers-angle", fill("[a](<", "")},
		{"struck-link-openers", fill("[~~a](", "")},
		{"links-with-delimiters", fill("[_](x) ", "")},
		{"links-with-delimiters-lines", fill("a [b*](x)\n", "")},
		{"brackets", fill("[", "")},
		{"reference-definitions", fill("[a]: b\n", "")},
		{"lines-of-brackets", fill("[a\n", "")},
	} {
		if len(c.md) > maxMarkdown {
			b.Fatalf("%s: %d bytes", c.name, len(c.md))
		}
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.md)))
			start := cpuTime()
			for b.Loop() {
				renderMarkdown(c.md, "")
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}

// A skill's page says, above its body, what of it is shown as text.
func TestSkillPageNotesBoundedMarkdown(t *testing.T) {
	t.Parallel()
	b := fixture(t)
	b.writeSkill(t, "deep", "Nested past the bound", strings.Repeat("- ", 100)+"a\n", nil)
	srv := newServer(t, b, Options{})
	for name, want := range map[string]string{"deep": `<p class="note">` + noteNested + `</p>`, "pdf": ""} {
		code, _, page := get(t, srv.URL+"/skills/"+name)
		if code != 200 || want != "" && !strings.Contains(page, want) || want == "" && strings.Contains(page, `class="note"`) {
			t.Errorf("/skills/%s: %d, want a note %q in\n%s", name, code, want, page)
		}
		if d := containerDepth(page); d > maxNesting {
			t.Errorf("/skills/%s: nested %d deep", name, d)
		}
	}
}
