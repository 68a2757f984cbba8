package skill

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
)

// Meta is a skill's parsed frontmatter and where its main file is: all
// that list, show, search and prompt need, without the skill's files or
// its body. It is made to be stored beside a synced skill (in the cache
// manifest) and read back instead of parsing SKILL.md again.
//
// Its JSON is stable: fields in a fixed order, map keys sorted, empty
// lists and maps left out. Decoding it gives a Meta equal to the one
// encoded, with Extra values as Parse makes them (numbers are
// json.Numbers). Decoding checks the
// result like any record read from disk (see Check), so a tampered record
// cannot smuggle in a name that is not a safe directory name.
type Meta struct {
	Name          string   `json:"name"`
	Description   string   `json:"description"`
	License       string   `json:"license,omitempty"`
	Compatibility string   `json:"compatibility,omitempty"`
	Version       string   `json:"version,omitempty"`
	Author        string   `json:"author,omitempty"`
	Tags          []string `json:"tags,omitempty"`
	Triggers      []string `json:"triggers,omitempty"`
	// AllowedToolsRaw is allowed-tools as written; AllowedTools the tools.
	AllowedToolsRaw string            `json:"allowed_tools_raw,omitempty"`
	AllowedTools    []string          `json:"allowed_tools,omitempty"`
	Metadata        map[string]string `json:"metadata,omitempty"`
	Extra           map[string]any    `json:"extra,omitempty"`
	// File is the main file's name, SKILL.md or skill.md.
	File string `json:"file"`
	// Path is where the skill lives in its source, slash-separated.
	Path string `json:"path"`
}

// Meta returns the skill's frontmatter and location. Empty lists and maps
// become nil, the form decoding gives back.
func (s *Skill) Meta() Meta {
	return Meta{
		Name: s.Name, Description: s.Description, License: s.License, Compatibility: s.Compatibility,
		Version: s.Version, Author: s.Author,
		Tags: nonEmpty(s.Tags), Triggers: nonEmpty(s.Triggers),
		AllowedToolsRaw: s.AllowedToolsRaw, AllowedTools: nonEmpty(s.AllowedTools),
		Metadata: nonEmptyMap(s.Metadata), Extra: nonEmptyMap(s.Extra),
		File: s.File, Path: s.Path,
	}
}

// FromMeta returns the skill that m describes, its files read through
// files, an fs.FS rooted at the skill's directory. The skill has no
// Listing: FileList walks files.
func FromMeta(m Meta, files fs.FS) Skill {
	return Skill{
		Name: m.Name, Description: m.Description, License: m.License, Compatibility: m.Compatibility,
		Version: m.Version, Author: m.Author,
		Tags: slices.Clone(m.Tags), Triggers: slices.Clone(m.Triggers),
		AllowedToolsRaw: m.AllowedToolsRaw, AllowedTools: slices.Clone(m.AllowedTools),
		Metadata: maps.Clone(m.Metadata), Extra: maps.Clone(m.Extra),
		File: m.File, Path: m.Path, Files: files,
	}
}

// ErrBadMeta is the error Check wraps.
var ErrBadMeta = errors.New("skill metadata is not valid")

// Check reports whether m can be trusted as a skill's record: its name is
// a valid name (ValidName: one safe path component, no control or
// bidirectional character), its description is not empty, its file is
// SKILL.md or skill.md and its path is a valid slash-separated path inside
// a source (fs.ValidPath).
func (m *Meta) Check() error {
	switch {
	case !ValidName(m.Name):
		return fmt.Errorf("%w: name %q is not a valid skill name", ErrBadMeta, m.Name)
	case m.Description == "":
		return fmt.Errorf("%w: skill %s has no description", ErrBadMeta, m.Name)
	case m.File != "SKILL.md" && m.File != "skill.md":
		return fmt.Errorf("%w: skill %s has the main file %q, not SKILL.md", ErrBadMeta, m.Name, m.File)
	case !fs.ValidPath(m.Path):
		return fmt.Errorf("%w: skill %s has the path %q, which is not a path inside a source", ErrBadMeta, m.Name, m.Path)
	}
	return nil
}

// UnmarshalJSON decodes m, keeping the numbers of Extra as json.Numbers,
// and checks the result (see Check).
func (m *Meta) UnmarshalJSON(b []byte) error {
	type plain Meta // without methods, so no recursion
	var raw struct {
		plain
		Extra json.RawMessage `json:"extra"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	out := Meta(raw.plain)
	out.Extra = nil
	if len(raw.Extra) > 0 && !bytes.Equal(raw.Extra, []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(raw.Extra))
		dec.UseNumber()
		if err := dec.Decode(&out.Extra); err != nil {
			return fmt.Errorf("skill %s: extra: %w", out.Name, err)
		}
	}
	out.Tags, out.Triggers, out.AllowedTools = nonEmpty(out.Tags), nonEmpty(out.Triggers), nonEmpty(out.AllowedTools)
	out.Metadata, out.Extra = nonEmptyMap(out.Metadata), nonEmptyMap(out.Extra)
	if err := out.Check(); err != nil {
		return err
	}
	*m = out
	return nil
}

func nonEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}

func nonEmptyMap[K comparable, V any](m map[K]V) map[K]V {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}
