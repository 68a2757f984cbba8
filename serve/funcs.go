package serve

import (
	"fmt"
	"html/template"
	"net/url"
	"strings"
	"time"
)

var funcs = template.FuncMap{
	"size":  size,
	"date":  date,
	"short": short,
	"days":  func(d time.Duration) int { return int(d.Hours() / 24) },
	// segment and filePath escape a skill's name and a file's path for a
	// link: html/template leaves '#', '?' and '%' as they are in a URL's
	// path, and a name such as "a#b" would link to "a".
	"segment":  url.PathEscape,
	"filePath": filePath,
}

// filePath escapes each element of a slash-separated path.
func filePath(p string) string {
	parts := strings.Split(p, "/")
	for i, part := range parts {
		parts[i] = url.PathEscape(part)
	}
	return strings.Join(parts, "/")
}

// size is a byte count as people read it.
func size(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
}

func date(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// short cuts a revision to 12 characters, as sync prints it.
func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}
