package materialize

import (
	"fmt"
	"io/fs"
	"runtime"
	"strings"

	"github.com/skillsync/skillsync/skill"
)

// What other systems' file systems do to skills, as ordinary Go: the
// rules are chosen by one switch (hostRules) and each can be turned on
// here, so their tests run on Linux.

// fsRules says what the file system of a destination cannot hold.
type fsRules struct {
	// foldCase: names that differ only in case are one name (the
	// default on macOS and Windows).
	foldCase bool
	// windowsNames: device names (CON, NUL, COM1, ...), a trailing dot
	// or space and the characters < > : " | ? * cannot be file names.
	windowsNames bool
	// noExecBit: the system keeps no executable bit (Windows stats every
	// file 0666, or 0444 when read-only), so a recorded mode is no drift.
	noExecBit bool
	// normBlind: names that differ only in Unicode normalization are one
	// name, and a listing may give the other spelling than the one
	// written (macOS: APFS compares names blind to normalization, HFS+
	// stores and lists them decomposed).
	normBlind bool
}

// hostRules are the rules of the system skillsync runs on. A Linux file
// system may fold case too (a mounted FAT or exFAT, ext4 with casefold);
// those are not detected, and a collision there shows as a file that
// differs from its record.
func hostRules() fsRules {
	switch runtime.GOOS {
	case "windows":
		return fsRules{foldCase: true, windowsNames: true, noExecBit: true}
	case "darwin", "ios":
		return fsRules{foldCase: true, normBlind: true}
	}
	return fsRules{}
}

// permMatches reports whether a live file's permission bits are the
// recorded ones, as far as the rules let a file system keep them.
func (r fsRules) permMatches(got, want fs.FileMode) bool {
	if r.noExecBit {
		return true
	}
	return got.Perm() == want.Perm()
}

// samePerm is permMatches under the rules of this system.
func samePerm(got, want fs.FileMode) bool { return hostRules().permMatches(got, want) }

// checkFiles reports the first file of a skill (paths sorted,
// slash-separated) that the rules' file system cannot hold: a name
// Windows refuses, or a path that differs only in case from another's
// (README.md and readme.md, or docs/a.md and Docs/b.md, whose folders
// would merge). It is a fileError naming the file.
func (r fsRules) checkFiles(list []skill.File) error {
	if !r.foldCase && !r.windowsNames {
		return nil
	}
	if r.windowsNames {
		for _, f := range list {
			for elem := range strings.SplitSeq(f.Path, "/") {
				if why := skill.WindowsNameProblem(elem); why != "" {
					return &fileError{f.Path, fmt.Errorf("cannot be written on Windows: %q %s", elem, why)}
				}
			}
		}
	}
	if r.foldCase {
		paths := make([]string, len(list))
		for i, f := range list {
			paths[i] = f.Path
		}
		if p, other := skill.CaseCollision(paths); p != "" {
			return &fileError{p, fmt.Errorf("differs only in case or Unicode normalization from %q: a case-insensitive file system (macOS, Windows) holds one of them", other)}
		}
	}
	return nil
}

// checkSkillName reports a skill name the rules' file system cannot hold
// as a folder.
func (r fsRules) checkSkillName(name string) error {
	if !r.windowsNames {
		return nil
	}
	if why := skill.WindowsNameProblem(name); why != "" {
		return fmt.Errorf("skill name %q cannot be a folder on Windows: it %s", name, why)
	}
	return nil
}

// skillNames checks the skill names of one destination folder as they
// come: a name the rules' file system cannot hold as a folder, or one
// that differs only in case from an earlier one, is refused before
// anything of it is written.
type skillNames struct {
	rules fsRules
	seen  map[string]string // folded -> as spelled
}

func newSkillNames(r fsRules) *skillNames { return &skillNames{rules: r, seen: map[string]string{}} }

func (n *skillNames) check(name string) error {
	if err := n.rules.checkSkillName(name); err != nil {
		return err
	}
	if !n.rules.foldCase {
		return nil
	}
	key := skill.FoldName(name)
	if other, ok := n.seen[key]; ok && other != name {
		return fmt.Errorf("skill %q differs only in case from skill %q: a case-insensitive file system (macOS, Windows) holds one of them; the first is kept", name, other)
	}
	n.seen[key] = name
	return nil
}
