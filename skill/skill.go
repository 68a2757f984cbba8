// Package skill holds the Skill type, the SKILL.md parser and the Agent
// Skills validation rules.
//
// A skill is a directory holding a SKILL.md: YAML frontmatter between two
// lines of "---", then Markdown instructions. Its other files are reached
// through Skill.Files, an fs.FS rooted at the skill directory, so a skill can
// come from a local directory, an embedded FS or a git tree alike.
package skill

import (
	"io/fs"
	"strings"
)

// Skill is one parsed skill.
type Skill struct {
	Name          string
	Description   string
	License       string
	Compatibility string
	Version       string
	Author        string
	Tags          []string
	Triggers      []string
	// AllowedToolsRaw is allowed-tools as the author wrote it: the string,
	// or the items of a YAML list joined by single spaces.
	AllowedToolsRaw string
	// AllowedTools is allowed-tools split into tools: at spaces and commas
	// outside parentheses for a string, so "Bash(git add:*) Read" is two
	// tools; one tool per item for a YAML list.
	AllowedTools []string
	Metadata     map[string]string
	// Extra keeps every frontmatter key skillsync does not interpret
	// (when_to_use, disable-model-invocation, argument-hint, model, ...)
	// with its value, so agents downstream lose nothing. Values are what
	// JSON decodes to: nil, bool, string, json.Number, []any and
	// map[string]any; timestamps, .inf, .nan and !!binary stay the text
	// the author wrote.
	Extra map[string]any

	// Files is rooted at the skill's directory.
	Files fs.FS
	// Path is where the skill lives in its source, slash-separated; "." when
	// the source root is the skill itself.
	Path string
	// File is the name of the skill's main file: "SKILL.md" or "skill.md".
	File string
	// Listing is the skill's regular files as discovery found them, in path
	// order, so later steps need not walk Files again; nil for a skill that
	// was not discovered. FileList falls back to a walk.
	Listing []File
}

// FileList returns the skill's regular files in path order: Listing when
// discovery filled it, else a walk of Files.
func (s *Skill) FileList() []File {
	if s.Listing != nil || s.Files == nil {
		return s.Listing // none for a skill whose files are not here
	}
	files, _ := ListFiles(s.Files, s.Path, 0)
	return files
}

// WhenToUse returns Claude Code's when_to_use text, which says more about
// when to use the skill than description does, or "".
func (s *Skill) WhenToUse() string {
	v, _ := s.Extra["when_to_use"].(string)
	return strings.TrimSpace(v)
}

// DisableModelInvocation reports whether the frontmatter asks agents not to
// load the skill on their own, which keeps it out of the rendered prompt.
func (s *Skill) DisableModelInvocation() bool {
	v, ok := s.Extra["disable-model-invocation"].(bool)
	return ok && v
}
