package repository

import (
	"os"
	"path/filepath"
	"strings"
)

// AbsPath expands a leading ~ and makes p absolute from base, cleaned; ""
// stays "". Kinds use it for the paths their settings hold (a key file, a
// directory), which a config gives relative to its folder.
func AbsPath(base, p string) string {
	if p == "" {
		return ""
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p)
}
