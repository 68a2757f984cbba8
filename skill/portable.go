package skill

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// What a skill must avoid to be written on every system: names Windows
// cannot hold, and names that differ only in case (macOS and Windows file
// systems fold case by default). materialize refuses them where the file
// system cannot hold them; Portability reports them everywhere, as
// warnings, for --strict.

// FoldName is name with case folded the way case-insensitive file
// systems compare: each letter becomes the smallest of its case-folding
// orbit (so K, k and the Kelvin sign, or Σ, σ and ς, are one). The name
// is decomposed first (Unicode NFD), because macOS compares names blind
// to normalization too: APFS takes é as one character and as e with a
// combining accent for one name, and HFS+ stores every name decomposed,
// so two files a skill holds under these two spellings are one file
// there.
func FoldName(name string) string {
	return strings.Map(func(r rune) rune {
		low := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < low {
				low = f
			}
		}
		return low
	}, norm.NFD.String(name))
}

// windowsDevices are the names Windows reserves in every folder, with or
// without an extension.
var windowsDevices = map[string]bool{
	"CON": true, "PRN": true, "AUX": true, "NUL": true, "CONIN$": true, "CONOUT$": true,
	"COM1": true, "COM2": true, "COM3": true, "COM4": true, "COM5": true, "COM6": true, "COM7": true, "COM8": true, "COM9": true,
	"COM¹": true, "COM²": true, "COM³": true,
	"LPT1": true, "LPT2": true, "LPT3": true, "LPT4": true, "LPT5": true, "LPT6": true, "LPT7": true, "LPT8": true, "LPT9": true,
	"LPT¹": true, "LPT²": true, "LPT³": true,
}

// WindowsNameProblem says why elem, one path element, cannot be a file or
// folder name on Windows, or "" when it can: a reserved device name (CON,
// PRN, AUX, NUL, COM1-9, LPT1-9, also with an extension: nul.txt), a
// trailing dot or space, a control character, or one of < > : " / \ | ? *.
func WindowsNameProblem(elem string) string {
	for _, r := range elem {
		switch {
		case r < 0x20:
			return "holds a control character"
		case strings.ContainsRune(`<>:"/\|?*`, r):
			return fmt.Sprintf("holds %q", r)
		}
	}
	if strings.HasSuffix(elem, ".") || strings.HasSuffix(elem, " ") {
		return "ends in a dot or a space"
	}
	base, _, _ := strings.Cut(elem, ".")
	if windowsDevices[strings.ToUpper(strings.TrimRight(base, " "))] {
		return "is a device name Windows reserves"
	}
	return ""
}

// CaseCollision returns the first path of files (slash-separated, in the
// order given) that differs only in case from an earlier one, or whose
// folder does (docs/b.md after Docs/a.md), and the path it collides with;
// "" when there is none.
func CaseCollision(files []string) (path, other string) {
	seen := map[string]string{} // folded path or folder -> as spelled
	for _, p := range files {
		elems := strings.Split(p, "/")
		for i := range elems {
			prefix := strings.Join(elems[:i+1], "/")
			key := FoldName(prefix)
			if o, ok := seen[key]; ok && o != prefix {
				return p, o
			}
			seen[key] = prefix
		}
	}
	return "", ""
}

// Portability reports, as warnings, what keeps the skill name (its folder
// dir inside its source) with files from being written on every system:
// names Windows cannot hold and files differing only in case. A portable
// skill has none; --strict makes them errors.
func Portability(name, dir string, files []File) []Problem {
	var out []Problem
	problem := func(file, msg string) {
		out = append(out, Problem{Level: Warning, Rule: "not-portable", Skill: name, Path: dir, File: file, Message: msg})
	}
	if why := WindowsNameProblem(name); why != "" {
		problem(dir, fmt.Sprintf("skill name %q cannot be a folder on Windows: it %s", name, why))
	}
	paths := make([]string, 0, len(files))
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	sort.Strings(paths)
	for _, p := range paths {
		for elem := range strings.SplitSeq(p, "/") {
			if why := WindowsNameProblem(elem); why != "" {
				problem(path.Join(dir, p), fmt.Sprintf("%q cannot be written on Windows: it %s", elem, why))
				break
			}
		}
	}
	if p, other := CaseCollision(paths); p != "" {
		problem(path.Join(dir, p), fmt.Sprintf("%q differs only in case or Unicode normalization from %q: a case-insensitive file system (macOS, Windows) holds one of them", p, other))
	}
	return out
}
