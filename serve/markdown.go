package serve

import (
	"bytes"
	"html/template"
	"sync"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// markdown renders GitHub-flavoured Markdown without raw HTML: goldmark
// leaves raw HTML out unless told otherwise.
// It is made at the first page that needs it, not at every start of the
// CLI.
var markdown = sync.OnceValue(func() goldmark.Markdown { return goldmark.New(goldmark.WithExtensions(extension.GFM)) })

// policy is what rendered Markdown may keep: the usual prose, lists,
// tables and code, links to http(s) and relative addresses only (no
// javascript:, data: or vbscript:), and nothing that runs.
func policy() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	p.AllowURLSchemes("http", "https")
	p.RequireParseableURLs(true)
	p.AllowRelativeURLs(true)
	p.RequireNoFollowOnLinks(true)
	return p
}

// renderMarkdown turns a skill's untrusted Markdown into HTML that is
// safe to put in a page.
func renderMarkdown(md string) template.HTML {
	var buf bytes.Buffer
	if err := markdown().Convert([]byte(md), &buf); err != nil {
		return template.HTML("<pre>" + template.HTMLEscapeString(md) + "</pre>")
	}
	return template.HTML(policy().SanitizeBytes(buf.Bytes()))
}
