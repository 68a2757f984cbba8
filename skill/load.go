package skill

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/skillsync/skillsync/internal/termtext"
)

// MaxSkillFile is the largest SKILL.md read, in bytes.
const MaxSkillFile = 4 << 20

// maxYAMLNodes bounds how many YAML nodes one frontmatter may expand to
// once aliases are followed. A billion-laughs document hits it after a few
// thousand steps instead of exhausting memory.
const maxYAMLNodes = 10000

// Options change what Load and Parse report.
type Options struct {
	// Strict also reports every field outside the Agent Skills
	// specification, the known clients' fields and skillsync's extensions
	// among them, as a warning with the rule field-not-in-spec (which
	// strict mode then counts as an error, see Strict). Without it, those
	// fields are read without a word; unknown fields and aliases are
	// reported either way.
	Strict bool
}

// Load parses the skill whose directory is the root of fsys.
//
// skillPath names the directory inside its source, for messages; dirName
// is the directory's own name, which the skill's name should equal. Load
// returns every problem it finds. When one of them is an Error the Skill is
// not usable; check with HasError.
func Load(fsys fs.FS, skillPath, dirName string) (Skill, []Problem) {
	return Options{}.Load(fsys, skillPath, dirName)
}

// Load is the package function Load with these options.
//
// Load reads SKILL.md only up to the end of its frontmatter: the body is
// never read (see ReadBody), so a catalog of many skills costs their
// frontmatter, not their instructions.
func (o Options) Load(fsys fs.FS, skillPath, dirName string) (Skill, []Problem) {
	s := Skill{Files: fsys, Path: skillPath}
	f, file, p := openSkillFile(fsys)
	s.File = file
	if p != nil {
		return s, []Problem{locate(*p, skillPath, file)}
	}
	head, capped, err := scanHead(io.LimitReader(f, MaxSkillFile))
	f.Close()
	if err != nil {
		p := Problem{Level: Error, Rule: "skill-md-unreadable", Message: err.Error()}
		return s, []Problem{locate(p, skillPath, file)}
	}
	problems := o.parse(&s, head, capped, dirName)
	if file != "SKILL.md" {
		// Copied as it is, it would reach agents that look for
		// SKILL.md alone, and the skill would be listed but never used.
		problems = append(problems, Problem{Level: Warning, Rule: "skill-md-name",
			Message: "the main file is " + file + ", but Codex and Claude Code on a case-sensitive file system load only SKILL.md: rename it to SKILL.md"})
	}
	for i := range problems {
		problems[i] = locate(problems[i], skillPath, file)
		problems[i].Skill = s.Name
	}
	return s, problems
}

// openSkillFile opens SKILL.md, or skill.md where that is the only one.
// Anything but a regular file of at most MaxSkillFile bytes is refused
// before it is opened, so a FIFO never blocks the reader, and checked
// again once open, in case it was swapped in between.
func openSkillFile(fsys fs.FS) (fs.File, string, *Problem) {
	var (
		info fs.FileInfo
		err  error
		name string
	)
	for _, name = range []string{"SKILL.md", "skill.md"} {
		info, err = fs.Stat(fsys, name)
		if !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "SKILL.md", &Problem{Level: Error, Rule: "skill-md-missing",
			Message: "no SKILL.md in the skill directory"}
	}
	if p := checkSkillFile(name, info, err); p != nil {
		return nil, name, p
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, name, &Problem{Level: Error, Rule: "skill-md-unreadable", Message: err.Error()}
	}
	info, err = f.Stat()
	if p := checkSkillFile(name, info, err); p != nil {
		f.Close()
		return nil, name, p
	}
	return f, name, nil
}

func checkSkillFile(name string, info fs.FileInfo, err error) *Problem {
	switch {
	case err != nil:
		return &Problem{Level: Error, Rule: "skill-md-unreadable", Message: err.Error()}
	case info.IsDir():
		return &Problem{Level: Error, Rule: "skill-md-not-regular",
			Message: name + " is a directory, not a file: a skill's " + name + " is the file of its instructions; rename the directory and write " + name + " as a file"}
	case !info.Mode().IsRegular():
		return &Problem{Level: Error, Rule: "skill-md-not-regular",
			Message: name + " is not a regular file (" + info.Mode().Type().String() + "): replace it with a file"}
	case info.Size() > MaxSkillFile:
		return &Problem{Level: Error, Rule: "skill-md-too-large",
			Message: fmt.Sprintf("%s is %d bytes; the limit is %d", name, info.Size(), MaxSkillFile)}
	}
	return nil
}

// ReadBody reads the skill's instructions: its main file after the
// frontmatter, with CRLF line ends turned into LF. It reads the file
// again, through Files, so only the skill that is asked for costs its
// body; a file over MaxSkillFile bytes, or one whose frontmatter no longer
// parses, is an error. ReadBodyPage reads the start of a long body only.
func (s *Skill) ReadBody() (string, error) {
	page, err := s.readBody(-1)
	return page.Text, err
}

// BodyPage is the start of a skill's instructions, as ReadBodyPage reads
// it. Offsets are bytes of the main file (File), as it is on disk.
type BodyPage struct {
	// Text is the instructions read, CRLF line ends turned into LF.
	Text string
	// Start is where the instructions begin in the main file (just after
	// the frontmatter), End where what Text shows of them ends: the rest
	// is the file from End on.
	Start, End int64
	// Size is the main file's size.
	Size int64
	// Sum is the SHA-256 of the whole main file, read to its end: it
	// tells a changed file even where Text does not show the change.
	Sum [sha256.Size]byte
}

// Cut reports whether Text leaves out the end of the instructions.
func (p BodyPage) Cut() bool { return p.End < p.Size }

// ReadBodyPage reads at most maxChars characters (Unicode code points,
// counted in the file, where CRLF is two) of the skill's instructions, cut
// at a character's end: a body of megabytes costs what an answer can
// carry, and End says where the rest starts. The rest of the file is
// read only into Sum. Its errors are ReadBody's.
func (s *Skill) ReadBodyPage(maxChars int) (BodyPage, error) {
	return s.readBody(max(maxChars, 0))
}

// readBody reads the body, all of it when maxChars < 0.
func (s *Skill) readBody(maxChars int) (BodyPage, error) {
	fail := func(err error) (BodyPage, error) {
		return BodyPage{}, fmt.Errorf("read body of skill %s (%s): %w", s.Name, s.Path, err)
	}
	if s.Files == nil || s.File == "" {
		return fail(errors.New("no files"))
	}
	f, err := s.Files.Open(s.File)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	info, err := f.Stat()
	if p := checkSkillFile(s.File, info, err); p != nil {
		return fail(errors.New(p.Message))
	}
	// The head (the frontmatter, at most maxHead+1 bytes read, as Load
	// reads it) and what maxChars characters can take.
	limit := int64(MaxSkillFile + 1)
	if maxChars >= 0 {
		limit = min(limit, maxHead+1+int64(maxChars)*utf8.UTFMax)
	}
	h := sha256.New()
	data, err := io.ReadAll(io.TeeReader(io.LimitReader(f, limit), h))
	var rest int64
	if err == nil {
		rest, err = io.Copy(h, io.LimitReader(f, MaxSkillFile+1-int64(len(data))))
	}
	if err == nil && int64(len(data))+rest > MaxSkillFile {
		err = fmt.Errorf("%s grew past %d bytes while being read", s.File, MaxSkillFile)
	}
	if err != nil {
		return fail(err)
	}
	head, capped, _ := scanHead(bytes.NewReader(data))
	if _, _, p := frontmatter(head, capped); p != nil {
		return fail(fmt.Errorf("%s: %s", s.File, p.Message))
	}
	body := data[len(head):]
	if maxChars >= 0 {
		body = firstChars(body, maxChars)
	}
	page := BodyPage{
		Text:  strings.ReplaceAll(string(body), "\r\n", "\n"),
		Start: int64(len(head)), End: int64(len(head) + len(body)),
		Size: int64(len(data)) + rest,
	}
	h.Sum(page.Sum[:0])
	return page, nil
}

// firstChars returns b up to the end of its n-th character, or short of
// it by a CR that the next byte's LF makes one line end with. The read
// gives it room for n characters of at most utf8.UTFMax bytes each, so
// the n-th is always whole in b.
func firstChars(b []byte, n int) []byte {
	i := 0
	for count := 0; count < n && i < len(b); count++ {
		_, size := utf8.DecodeRune(b[i:])
		i += size
	}
	if i > 0 && i < len(b) && b[i-1] == '\r' && b[i] == '\n' {
		i--
	}
	return b[:i]
}

// Parse parses the bytes of a SKILL.md into a Skill, which has no Files.
// dirName is the skill directory's name, or "" to skip the check that the
// two agree. Only the frontmatter is looked at.
func Parse(data []byte, dirName string) (Skill, []Problem) {
	return Options{}.Parse(data, dirName)
}

// Parse is the package function Parse with these options.
func (o Options) Parse(data []byte, dirName string) (Skill, []Problem) {
	var s Skill
	head, capped, _ := scanHead(bytes.NewReader(data)) // a bytes.Reader never fails
	problems := o.parse(&s, head, capped, dirName)
	return s, problems
}

// parse parses the head of a SKILL.md, as scanHead read it, into s.
func (o Options) parse(s *Skill, head []byte, capped bool, dirName string) []Problem {
	fm, fmLine, p := frontmatter(head, capped)
	if p != nil {
		return []Problem{*p}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(fm), &doc); err != nil {
		return []Problem{{Level: Error, Rule: "frontmatter-yaml",
			Line: yamlErrorLine(err, fmLine), Message: "frontmatter is not valid YAML: " + trimYAMLError(err) + colonHint(err, fm)}}
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return []Problem{{Level: Error, Rule: "frontmatter-not-mapping", Line: fmLine,
			Message: "frontmatter must be a YAML mapping of keys to values (name: ..., description: ...)"}}
	}
	d := decoder{s: s, strict: o.Strict, offset: fmLine - 1, budget: maxYAMLNodes}
	if o.Strict && bytes.HasPrefix(head, bom) {
		// skills-ref, the specification's reference validator, refuses a
		// SKILL.md that does not start with "---".
		d.add(Warning, "frontmatter-bom", 1, "SKILL.md starts with a UTF-8 byte order mark, which the Agent Skills reference validator refuses; save it as UTF-8 without a BOM")
	}
	d.mapping(doc.Content[0])
	if d.fatal {
		return d.problems
	}
	return append(d.problems, d.validate(dirName)...)
}

// decoder turns the frontmatter mapping into Skill fields.
type decoder struct {
	s        *Skill
	strict   bool // report fields outside the specification
	offset   int  // added to YAML line numbers to give file line numbers
	budget   int  // YAML nodes left to visit
	fatal    bool
	lines    map[field]int
	keyLines map[string]int // file line of every key, as written
	problems []Problem
}

func (d *decoder) add(level Level, rule string, line int, format string, args ...any) {
	d.problems = append(d.problems, Problem{Level: level, Rule: rule, Line: line, Message: fmt.Sprintf(format, args...)})
}

func (d *decoder) mapping(m *yaml.Node) {
	d.lines = map[field]int{}
	d.keyLines = map[string]int{}
	for _, p := range d.pairs(m) {
		k, v := p.k, p.v
		if d.fatal {
			return
		}
		line := k.Line + d.offset
		_, seen := d.keyLines[k.Value]
		if !seen {
			d.keyLines[k.Value] = line
		}
		f, known := keys[k.Value]
		if _, set := d.lines[f]; p.merged && (seen || known && set) {
			continue // the mapping's own key, or an earlier merge's, wins
		}
		if !known {
			if client, ok := clientKeys[k.Value]; !ok {
				d.add(Warning, "field-unknown", line, "field %q is not part of the Agent Skills specification nor a known client's field", k.Value)
			} else if d.strict {
				d.add(Warning, "field-not-in-spec", line, "field %q is %s's, not part of the Agent Skills specification", k.Value, client)
			}
			if d.s.Extra == nil {
				d.s.Extra = map[string]any{}
			}
			d.s.Extra[k.Value] = d.value(v)
			continue
		}
		if want := canonical[f]; k.Value != want {
			d.add(Warning, "field-alias", line, "field %q is an alias: write %q", k.Value, want)
		} else if d.strict && !specKeys[k.Value] {
			d.add(Warning, "field-not-in-spec", line, "field %q is a skillsync extension, not part of the Agent Skills specification", k.Value)
		}
		if prev, dup := d.lines[f]; dup {
			d.add(Warning, "field-duplicate", line, "field %q repeats %q from line %d; the first one is used", k.Value, canonical[f], prev)
			continue
		}
		d.lines[f] = line
		d.set(f, k.Value, v, line)
	}
}

func (d *decoder) set(f field, key string, v *yaml.Node, line int) {
	switch f {
	case fieldName, fieldDescription:
		str, ok := d.scalar(key, v, line, Error)
		if f == fieldName {
			d.s.Name = NormalizeName(str)
		} else if ok {
			d.s.Description = strings.TrimSpace(str)
		}
	case fieldLicense:
		if v.Kind == yaml.SequenceNode {
			// Several licenses, as skills-ref accepts them.
			d.s.License = strings.Join(d.list(key, v, line, ""), ", ")
			return
		}
		d.s.License, _ = d.scalar(key, v, line, Warning)
	case fieldCompatibility:
		d.s.Compatibility, _ = d.scalar(key, v, line, Warning)
	case fieldVersion:
		d.s.Version, _ = d.scalar(key, v, line, Warning)
	case fieldAuthor:
		d.s.Author, _ = d.scalar(key, v, line, Warning)
	case fieldMetadata:
		d.metadata(key, v, line)
	case fieldAllowedTools:
		d.allowedTools(key, v, line)
	case fieldTriggers:
		d.s.Triggers = d.list(key, v, line, "")
	case fieldTags:
		d.s.Tags = d.list(key, v, line, ",")
	}
}

// scalar returns a scalar value as a string. Any other kind is a problem at
// the given level.
func (d *decoder) scalar(key string, v *yaml.Node, line int, level Level) (string, bool) {
	if v.Kind != yaml.ScalarNode {
		d.add(level, "field-type", line, "field %q must be a single value, not a %s", key, kindName(v))
		return "", false
	}
	if v.Tag == "!!null" {
		return "", true
	}
	return v.Value, true
}

// list reads a sequence of scalars, or one string split at any of seps.
func (d *decoder) list(key string, v *yaml.Node, line int, seps string) []string {
	var out []string
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Tag == "!!null" {
			return nil
		}
		parts := []string{v.Value}
		if seps != "" {
			parts = strings.FieldsFunc(v.Value, func(r rune) bool { return strings.ContainsRune(seps, r) })
		}
		for _, p := range parts {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	case yaml.SequenceNode:
		for _, item := range v.Content {
			item = d.deref(item)
			if item.Kind != yaml.ScalarNode {
				d.add(Warning, "field-type", item.Line+d.offset, "items of %q must be single values, not a %s", key, kindName(item))
				continue
			}
			if s := strings.TrimSpace(item.Value); s != "" {
				out = append(out, s)
			}
		}
	default:
		d.add(Warning, "field-type", line, "field %q must be a list or a string, not a %s", key, kindName(v))
	}
	return out
}

// allowedTools keeps allowed-tools as written and splits it into tools.
// The Agent Skills specification makes it a space-separated string, Claude
// Code also takes a YAML list, and older skills separate with commas; a
// tool such as Bash(git add:*) holds spaces of its own.
func (d *decoder) allowedTools(key string, v *yaml.Node, line int) {
	if v.Kind == yaml.ScalarNode {
		if v.Tag == "!!null" {
			return
		}
		d.s.AllowedToolsRaw = strings.TrimSpace(v.Value)
		d.s.AllowedTools = SplitTools(d.s.AllowedToolsRaw)
		return
	}
	d.s.AllowedTools = d.list(key, v, line, "")
	d.s.AllowedToolsRaw = strings.Join(d.s.AllowedTools, " ")
}

// SplitTools splits an allowed-tools string into tools at spaces and
// commas that are not inside parentheses: "Bash(git add:*) Bash(npm run
// test:*) Read" is three tools, and so is "Read, Grep, Bash(a, b)". A
// closing parenthesis without an opening one is part of the tool; an
// opening one never closed makes the rest of the string one tool.
func SplitTools(s string) []string {
	var out []string
	depth, start := 0, 0
	cut := func(end int) {
		if t := strings.TrimSpace(s[start:end]); t != "" {
			out = append(out, t)
		}
	}
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')':
			if depth > 0 {
				depth--
			}
		case depth == 0 && (r == ',' || unicode.IsSpace(r)):
			cut(i)
			start = i + utf8.RuneLen(r)
		}
	}
	cut(len(s))
	return out
}

func (d *decoder) metadata(key string, v *yaml.Node, line int) {
	if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
		return // "metadata:" with nothing under it is empty, as skills-ref reads it
	}
	if v.Kind != yaml.MappingNode {
		d.add(Warning, "field-type", line, "field %q must be a mapping of keys to values, not a %s", key, kindName(v))
		return
	}
	d.s.Metadata = map[string]string{}
	for _, p := range d.pairs(v) {
		k, val := p.k, p.v
		if _, set := d.s.Metadata[k.Value]; p.merged && set {
			continue
		}
		if val.Kind == yaml.ScalarNode {
			d.s.Metadata[k.Value] = val.Value
			continue
		}
		out, err := yaml.Marshal(yamlValue(d.value(val)))
		if err != nil {
			d.add(Warning, "field-type", k.Line+d.offset, "metadata %q: %v", k.Value, err)
			continue
		}
		d.s.Metadata[k.Value] = strings.TrimSpace(string(out))
	}
}

// pair is a key of a mapping and its value, dereferenced; merged when a
// YAML merge key brought it in.
type pair struct {
	k, v   *yaml.Node
	merged bool
}

// pairs returns the keys and values of the mapping m, and after them the
// ones its merge keys (<<: *anchor, or a list of them) bring in, as YAML
// merges them: a key of the mapping's own wins over a merged one, and an
// earlier merged mapping over a later one, which is for the caller to
// apply (a merged pair comes after every pair that wins over it).
func (d *decoder) pairs(m *yaml.Node) []pair {
	var out []pair
	d.appendPairs(&out, m, false)
	return out
}

// appendPairs appends m's own pairs to out, then those of the mappings
// its merge keys name, each with its own merges, depth first.
func (d *decoder) appendPairs(out *[]pair, m *yaml.Node, merged bool) {
	var merges []*yaml.Node // merge keys and their values
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], d.deref(m.Content[i+1])
		if d.fatal {
			return
		}
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			merges = append(merges, k, v)
			continue
		}
		*out = append(*out, pair{k: k, v: v, merged: merged})
	}
	for i := 0; i < len(merges); i += 2 {
		k, v := merges[i], merges[i+1]
		sources := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			sources = sources[:0]
			for _, item := range v.Content {
				sources = append(sources, d.deref(item))
			}
		}
		for _, src := range sources {
			if d.fatal {
				return
			}
			if src.Kind != yaml.MappingNode {
				d.add(Warning, "field-type", k.Line+d.offset, "the merge key << takes a mapping (<<: *anchor) or a list of them, not a %s; it is ignored", kindName(src))
				break
			}
			d.appendPairs(out, src, true)
		}
	}
}

// deref follows aliases and charges the visit to the node budget.
func (d *decoder) deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	d.budget--
	if d.budget < 0 && !d.fatal {
		d.fatal = true
		d.problems = append(d.problems, Problem{Level: Error, Rule: "frontmatter-aliases", Line: n.Line + d.offset,
			Message: fmt.Sprintf("frontmatter expands to more than %d YAML nodes through aliases; write the values out", maxYAMLNodes)})
	}
	return n
}

// value converts a node to plain Go values, within the node budget. The
// values are the ones JSON decodes to, so Extra survives a trip through
// JSON unchanged (see Meta): nil, bool, string, json.Number, []any and
// map[string]any. A number is a json.Number in its shortest form (0x1F is
// 31, 1.0 is 1). What JSON has no value for is kept as the text the author
// wrote: timestamps, .inf and .nan, and !!binary (its base64, since the
// bytes need not be text).
func (d *decoder) value(n *yaml.Node) any {
	if d.fatal {
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for _, p := range d.pairs(n) {
			k := validUTF8(p.k.Value)
			if _, set := m[k]; p.merged && set {
				continue
			}
			m[k] = d.value(p.v)
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, item := range n.Content {
			s = append(s, d.value(d.deref(item)))
		}
		return s
	}
	var v any
	if err := n.Decode(&v); err != nil || n.Tag == "!!binary" {
		return validUTF8(n.Value)
	}
	switch v := v.(type) {
	case nil, bool:
		return v
	case string:
		return validUTF8(v)
	case int:
		return json.Number(strconv.Itoa(v))
	case int64:
		return json.Number(strconv.FormatInt(v, 10))
	case uint64:
		return json.Number(strconv.FormatUint(v, 10))
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return n.Value
		}
		return json.Number(strconv.FormatFloat(v, 'g', -1, 64))
	}
	return validUTF8(n.Value) // time.Time and anything else yaml.v3 may add
}

// validUTF8 replaces bytes that are not UTF-8, which JSON would replace on
// its own, so that the value is the same before and after.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// yamlValue turns the json.Numbers of a value into Go numbers, so that
// YAML writes them as numbers and not as strings.
func yamlValue(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		if u, err := strconv.ParseUint(string(v), 10, 64); err == nil {
			return u
		}
		f, _ := v.Float64()
		return f
	case []any:
		out := make([]any, len(v))
		for i, item := range v {
			out[i] = yamlValue(item)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, item := range v {
			out[k] = yamlValue(item)
		}
		return out
	}
	return v
}

func (d *decoder) validate(dirName string) []Problem {
	var out []Problem
	s := d.s
	if s.Name == "" {
		out = append(out, Problem{Level: Error, Rule: "name-missing", Line: d.lines[fieldName],
			Message: "name is missing or empty: add name: <directory name> to the frontmatter"})
	} else if p := nameError(s.Name); p != nil {
		p.Line = d.lines[fieldName]
		out = append(out, *p)
	} else {
		for _, p := range nameWarnings(s.Name, dirName) {
			p.Line = d.lines[fieldName]
			out = append(out, p)
		}
	}
	if s.Description == "" && s.WhenToUse() != "" {
		// Claude Code lists a skill by when_to_use alone; keep such a skill,
		// and its when_to_use, rather than drop it.
		s.Description = s.WhenToUse()
		out = append(out, Problem{Level: Warning, Rule: "description-from-when-to-use", Line: d.keyLines["when_to_use"],
			Message: "description is missing: when_to_use stands in for it; add a description that says what the skill does"})
	}
	if s.Description == "" {
		out = append(out, Problem{Level: Error, Rule: "description-missing", Line: d.lines[fieldDescription],
			Message: "description is missing or empty: say what the skill does and when to use it"})
	} else if n := utf8.RuneCountInString(s.Description); n > 1024 {
		out = append(out, Problem{Level: Warning, Rule: "description-too-long", Line: d.lines[fieldDescription],
			Message: fmt.Sprintf("description is %d characters long; the limit is 1024", n)})
	} else if IsPlaceholderDescription(s.Description) {
		// An agent decides from the description alone whether to load
		// the skill: one that says nothing is never loaded, or loaded
		// for everything.
		out = append(out, Problem{Level: Warning, Rule: "description-placeholder", Line: d.lines[fieldDescription],
			Message: "description in SKILL.md is still the placeholder skillsync new wrote: write in its place what the skill does and when to use it"})
	}
	if n := utf8.RuneCountInString(s.Compatibility); n > 500 {
		out = append(out, Problem{Level: Warning, Rule: "compatibility-too-long", Line: d.lines[fieldCompatibility],
			Message: fmt.Sprintf("compatibility is %d characters long; the limit is 500", n)})
	}
	return append(out, d.controlChars()...)
}

// controlChars warns of a text field that holds a control or formatting
// character other than a line feed or a tab. The specification sets no
// rule for them, and skillsync escapes them wherever it prints a field
// and in the prompt, so the skill is kept; but an agent reads the field
// raw (over MCP, in a target's copy), where an ESC, a bidirectional
// override or the invisible tag characters (U+E0000-U+E007F) say what a
// person reviewing the skill does not see. A name holding one is an
// error instead (nameError): it becomes a directory name.
func (d *decoder) controlChars() []Problem {
	s := d.s
	var out []Problem
	check := func(f field, key string, values ...string) {
		for _, v := range values {
			for _, r := range v {
				if r != '\n' && r != '\t' && termtext.Unsafe(r) {
					out = append(out, Problem{Level: Warning, Rule: "field-control-char", Line: d.lines[f], Message: fmt.Sprintf(
						"%s holds the control or formatting character %U: skillsync shows it escaped, but an agent reads it raw, where it hides or turns text a person reviewing the skill does not see; remove it",
						key, r)})
					return
				}
			}
		}
	}
	check(fieldDescription, "description", s.Description)
	check(fieldLicense, "license", s.License)
	check(fieldCompatibility, "compatibility", s.Compatibility)
	check(fieldVersion, "version", s.Version)
	check(fieldAuthor, "author", s.Author)
	check(fieldAllowedTools, "allowed-tools", s.AllowedToolsRaw)
	check(fieldTriggers, "triggers", s.Triggers...)
	check(fieldTags, "tags", s.Tags...)
	for _, k := range slices.Sorted(maps.Keys(s.Metadata)) {
		check(fieldMetadata, "metadata "+strconv.Quote(k), k, s.Metadata[k])
	}
	return out
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	}
	return "value"
}

var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+):`) })

// yamlErrorLine turns the line in a yaml.v3 error into a file line.
func yamlErrorLine(err error, fmLine int) int {
	m := yamlLine().FindStringSubmatch(err.Error())
	if m == nil {
		return fmLine
	}
	n, _ := strconv.Atoi(m[1])
	return n + fmLine - 1
}

// colonHint says how to fix the mistake most SKILL.md files that do not
// parse make, a plain value holding ": " (description: Deploy: build and
// ship), which yaml.v3 only calls "mapping values are not allowed in this
// context"; the example is the line at fault, quoted, where it is one
// key and a value.
func colonHint(err error, fm string) string {
	if !strings.Contains(err.Error(), "mapping values are not allowed") {
		return ""
	}
	example := `description: "Deploy: build and ship"`
	if m := yamlLine().FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		if lines := strings.Split(fm, "\n"); n >= 1 && n <= len(lines) {
			line := strings.TrimSpace(lines[n-1])
			if k, v, ok := strings.Cut(line, ": "); ok && strings.Contains(v, ": ") && !strings.ContainsAny(k, " \"'") && !strings.ContainsAny(v[:1], "\"'[{") {
				example = k + ": " + strconv.Quote(v)
			}
		}
	}
	return "; a value holding \": \" must be quoted: " + example
}

// trimYAMLError drops yaml.v3's "yaml: line N:" prefix, since the problem
// carries the file line itself.
func trimYAMLError(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if loc := yamlLine().FindStringIndex(msg); loc != nil && loc[0] == 0 {
		msg = strings.TrimSpace(msg[loc[1]:])
	}
	return msg
}
