package skill

import (
	"cmp"
	"path"
	"strconv"
	"strings"

	"github.com/skillsync/skillsync/internal/termtext"
)

// Level says what a problem does to its skill.
type Level string

const (
	// Error: the skill is skipped everywhere.
	Error Level = "error"
	// Warning: the skill is kept; strict mode turns warnings into errors.
	Warning Level = "warning"
)

// Problem is one finding about one skill or one file of a source.
type Problem struct {
	Level   Level  `json:"level"`
	Rule    string `json:"rule"`
	Message string `json:"message"`
	Source  string `json:"source,omitempty"`
	// Skill is the skill's name where it is known.
	Skill string `json:"skill,omitempty"`
	// Path is the skill's directory inside its source, slash-separated.
	Path string `json:"path,omitempty"`
	// File is the file the problem is in, relative to the source root.
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
}

// String renders a problem as "FILE:LINE: LEVEL: MESSAGE (RULE)", the shape
// compilers use, so editors can jump to it. It is one line, safe to print
// on a terminal: paths and messages come from sources, so their control
// and bidirectional characters are escaped (termtext.Escape).
func (p Problem) String() string {
	var parts []string
	if p.Source != "" {
		parts = append(parts, p.Source)
	}
	if f := cmp.Or(p.File, p.Path); f != "" {
		parts = append(parts, f)
	}
	if p.Line > 0 {
		parts = append(parts, strconv.Itoa(p.Line))
	}
	parts = append(parts, " "+string(p.Level), " "+p.Message+" ("+p.Rule+")")
	if len(parts) == 2 {
		// No place to name: "skillsync: error: ...", as the program's
		// own messages begin, rather than a line that opens with a space.
		parts = append([]string{"skillsync"}, parts...)
	}
	return termtext.Escape(strings.Join(parts, ":"))
}

// HasError reports whether any problem is an error, or with strict any
// problem at all.
func HasError(problems []Problem, strict bool) bool {
	for _, p := range problems {
		if p.Level == Error || strict {
			return true
		}
	}
	return false
}

// Strict returns problems with every warning raised to an error.
func Strict(problems []Problem) []Problem {
	out := make([]Problem, len(problems))
	for i, p := range problems {
		p.Level = Error
		out[i] = p
	}
	return out
}

// locate fills in where a problem is, given the skill's path in its source.
func locate(p Problem, skillPath, file string) Problem {
	p.Path = skillPath
	if file != "" {
		p.File = path.Join(skillPath, file)
	}
	return p
}
