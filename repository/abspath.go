package repository

import (
	"fmt"
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

// Literal checks that p, a path from a config, means what it says:
// skillsync expands ~/ alone. A variable ($HOME, ${HOME}) or ~user would
// name a folder of that very name in the workspace, and a NUL byte no
// folder at all.
func Literal(p string) error {
	switch {
	case strings.ContainsRune(p, 0):
		return fmt.Errorf("path %q holds a NUL byte", p)
	case strings.HasPrefix(p, "~") && p != "~" && !strings.HasPrefix(p, "~/"):
		return fmt.Errorf("path %q begins with ~NAME, which is not expanded (only ~/, your home folder, is): write the folder in full", p)
	}
	for i := strings.IndexByte(p, '$'); i >= 0 && i+1 < len(p); i = next(p, i) {
		if c := p[i+1]; c == '{' || c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' {
			return fmt.Errorf("path %q holds a variable, which skillsync does not expand: write the folder in full (~/ stands for your home folder)", p)
		}
	}
	return nil
}

// next is the index of the '$' after the one at i, -1 when none.
func next(p string, i int) int {
	j := strings.IndexByte(p[i+1:], '$')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}
