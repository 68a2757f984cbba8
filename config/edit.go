package config

import (
	"github.com/skillsync/skillsync/internal/hostenv"

	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/repository"
)

// The editing functions (AddTarget, AddRepository, RemoveRepository,
// RemoveSkill) change a config file the way a person would: yaml.v3's
// node tree says where every key and list item starts, and the edit
// replaces or inserts whole lines of the original text there. Everything
// else, comments, blank lines, order, quoting and indentation, stays byte
// for byte. Re-encoding the tree instead would drop blank lines and move
// comments. Every edit is checked by loading the result as Load does
// before the file is replaced, so an edit never leaves a config that does
// not load.

// document is a config file open for one edit.
type document struct {
	env   hostenv.Env // whose home "~" and the default global folder are
	file  string
	lines []string // without their line ends
	eol   string
	perm  fs.FileMode
	root  *yaml.Node // the top mapping; nil for a file without content
	cfg   *Config    // the file as it loaded before the edit
	kinds *repository.Registry
}

// openDocument reads the config at name for an edit. The file must load:
// an edit of a config that does not would hide its mistakes.
func openDocument(env hostenv.Env, name string, kinds *repository.Registry) (*document, error) {
	abs, err := env.Abs(name)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", name, err)
	}
	if info, err := os.Lstat(abs); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		// Replacing the file would replace the link; writing through it
		// would write where skillsync was not pointed. Neither is asked.
		return nil, fmt.Errorf("config %s is a symbolic link, which skillsync does not edit through: edit the file it points to by hand (naming that file with --config would make its folder the workspace, unless it sets workspace:)", abs)
	}
	data, info, err := readFile(abs)
	if err != nil {
		return nil, &Error{File: abs, Errs: []error{err}}
	}
	cfg, err := parse(env, abs, data, kinds)
	if err != nil {
		return nil, err
	}
	cfg.FileInfo = info
	d := &document{env: env, file: abs, eol: "\n", perm: info.Mode().Perm(), cfg: cfg, kinds: kinds}
	text := string(data)
	if strings.Contains(text, "\r\n") {
		d.eol = "\r\n"
	}
	text = strings.TrimSuffix(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	if text != "" {
		d.lines = strings.Split(text, "\n")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &Error{File: abs, Errs: []error{syntaxError(data, err)}}
	}
	if len(doc.Content) > 0 {
		d.root = doc.Content[0]
	}
	return d, nil
}

// reparse reads the node tree again from the edited text: the lines an
// edit spliced in moved every node below them, and a second edit of the
// same document must find its key where it is now.
func (d *document) reparse() error {
	var doc yaml.Node
	if err := yaml.Unmarshal(d.bytes(), &doc); err != nil {
		return fmt.Errorf("the edited text does not parse: %w", err)
	}
	d.root = nil
	if len(doc.Content) > 0 {
		d.root = doc.Content[0]
	}
	return nil
}

// bytes returns the edited text.
func (d *document) bytes() []byte {
	if len(d.lines) == 0 {
		return nil
	}
	return []byte(strings.Join(d.lines, d.eol) + d.eol)
}

// save checks the edited text loads and replaces the file with it.
func (d *document) save() (*Config, error) {
	data := d.bytes()
	cfg, err := parse(d.env, d.file, data, d.kinds)
	if err != nil {
		return nil, fmt.Errorf("the edit would leave a config that does not load, so %s is unchanged: %w", d.file, err)
	}
	if err := atomicfile.WriteFile(d.file, data, d.perm); err != nil {
		return nil, fmt.Errorf("write config %s: %w", d.file, err)
	}
	return cfg, nil
}

// splice replaces lines [from, to) with repl.
func (d *document) splice(from, to int, repl ...string) {
	out := make([]string, 0, len(d.lines)-(to-from)+len(repl))
	out = append(out, d.lines[:from]...)
	out = append(out, repl...)
	out = append(out, d.lines[to:]...)
	d.lines = out
}

// topKey returns the key and value of the top-level key name, or nils.
func (d *document) topKey(name string) (k, v *yaml.Node) {
	if d.root == nil || d.root.Kind != yaml.MappingNode {
		return nil, nil
	}
	return mappingKey(d.root, name)
}

func mappingKey(m *yaml.Node, name string) (k, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == name {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

func indentOf(line string) int { return len(line) - len(strings.TrimLeft(line, " ")) }

func isBlank(line string) bool { return strings.TrimSpace(line) == "" }

// isDash reports whether line is a block sequence entry indented by n.
func isDash(line string, n int) bool {
	if indentOf(line) != n {
		return false
	}
	rest := line[n:]
	return rest == "-" || strings.HasPrefix(rest, "- ")
}

// blockEnd returns the index of the last line of the block whose first
// line is start and whose header is indented by indent: the lines after
// it that are indented deeper (comments included), and with seq the
// "- " entries at indent itself, which YAML allows for a list under a
// key. Blank lines and comments that follow the block at its own
// indentation or less belong to what comes next.
func (d *document) blockEnd(start, indent int, seq bool) int {
	end := start
	for i := start + 1; i < len(d.lines); i++ {
		l := d.lines[i]
		switch {
		case isBlank(l):
		case indentOf(l) > indent, seq && isDash(l, indent):
			end = i
		default:
			return end
		}
	}
	return end
}

// item is one entry of a block sequence as lines of the text.
type item struct {
	node       *yaml.Node
	dash, end  int // first and last line
	dashIndent int
}

// items returns the entries of the block sequence seq, which follows the
// key on line keyLine (both 0-based).
func (d *document) items(seq *yaml.Node, keyLine int) ([]item, error) {
	var out []item
	for _, n := range seq.Content {
		// The dash is on the entry's first line, or above it for an entry
		// written as "-" alone on a line.
		dash := -1
		for l := n.Line - 1; l > keyLine && l >= 0; l-- {
			in := indentOf(d.lines[l])
			if in < n.Column-1 && strings.HasPrefix(d.lines[l][in:], "-") {
				dash = l
				break
			}
		}
		if dash < 0 {
			return nil, fmt.Errorf("line %d: cannot find the - of this list entry", n.Line)
		}
		in := indentOf(d.lines[dash])
		out = append(out, item{node: n, dash: dash, end: d.blockEnd(dash, in, false), dashIndent: in})
	}
	return out, nil
}

// blockList finds the top-level list key for an edit. A key written as
// "key:", "key: ~" or "key: []" is an empty list; a flow list with entries
// ("key: [a, b]") is refused, since its entries share lines.
func (d *document) blockList(key string) (k, v *yaml.Node, err error) {
	k, v = d.topKey(key)
	if k == nil {
		return nil, nil, nil
	}
	switch {
	case v.Kind == yaml.ScalarNode && v.Tag == "!!null":
	case v.Kind == yaml.SequenceNode && len(v.Content) == 0:
	case v.Kind == yaml.SequenceNode && v.Style&yaml.FlowStyle == 0:
	case v.Kind == yaml.SequenceNode:
		return nil, nil, fmt.Errorf("line %d: %s: is a flow list ([...]); write it as a block list, one \"- \" entry a line, so skillsync can edit it", k.Line, key)
	default:
		return nil, nil, fmt.Errorf("line %d: %s must be a list", k.Line, key)
	}
	return k, v, nil
}

// emptyList rewrites the line of key k, whose value is empty, to
// "key:" (bare is true, for entries to follow) or "key: []", keeping a
// comment at its end.
func (d *document) emptyList(k *yaml.Node, bare bool) {
	l := k.Line - 1
	line := d.lines[l]
	colon := strings.Index(line[min(len(line), k.Column-1+len(k.Value)):], ":")
	if colon < 0 {
		return
	}
	colon += min(len(line), k.Column-1+len(k.Value))
	head, rest := line[:colon+1], line[colon+1:]
	comment := ""
	if i := strings.Index(rest, "#"); i >= 0 {
		comment = " " + rest[i:]
	}
	if !bare {
		head += " []"
	}
	d.lines[l] = head + comment
}

// appendEntry adds entry, the lines of one list entry without indentation
// (the first starting "- "), at the end of the top-level list key; before
// names the top-level key a new list is written above when the file has
// no key yet ("" for the end of the file).
func (d *document) appendEntry(key string, entry []string, before string) error {
	k, v, err := d.blockList(key)
	if err != nil {
		return err
	}
	if k == nil {
		block := append([]string{key + ":"}, indentLines(entry, 2)...)
		at := len(d.lines)
		if bk, _ := d.topKey(before); bk != nil {
			// Above the key and the comment lines right above it, so that
			// key stays where it was: a file whose repositories: came last
			// still ends with it, and a person appending an entry at the
			// end appends it to the repositories.
			at = bk.Line - 1
			for at > 0 && strings.HasPrefix(strings.TrimSpace(d.lines[at-1]), "#") && indentOf(d.lines[at-1]) == bk.Column-1 {
				at--
			}
			block = append(block, "")
		} else if at > 0 && !isBlank(d.lines[at-1]) {
			block = append([]string{""}, block...)
		}
		d.splice(at, at, block...)
		return nil
	}
	keyLine, keyIndent := k.Line-1, k.Column-1
	dashIndent := keyIndent + 2
	if len(v.Content) == 0 {
		d.emptyList(k, true)
	} else {
		its, err := d.items(v, keyLine)
		if err != nil {
			return err
		}
		dashIndent = its[0].dashIndent
	}
	at := d.blockEnd(keyLine, keyIndent, true) + 1
	d.splice(at, at, indentLines(entry, dashIndent)...)
	return nil
}

// indentLines indents lines by n spaces.
func indentLines(lines []string, n int) []string {
	pad := strings.Repeat(" ", n)
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = pad + l
	}
	return out
}

// scalar renders s as a YAML scalar that reads back as the string s,
// quoted only where it must be.
func scalar(s string) (string, error) {
	if strings.ContainsAny(s, "\n\r") {
		return "", fmt.Errorf("%q holds a line break", s)
	}
	out, err := yaml.Marshal(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s})
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(out), "\n"), nil
}

// flowList renders names as a one-line list: [a, "b: c"].
func flowList(names []string) (string, error) {
	seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, n := range names {
		if strings.ContainsAny(n, "\n\r") {
			return "", fmt.Errorf("%q holds a line break", n)
		}
		seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: n})
	}
	out, err := yaml.Marshal(seq)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(out), "\n"), nil
}

// AddTarget adds {dir: DIR} (mode copy, the default) to the targets of the
// config file at name, keeping its comments, blank lines and order. A
// target that resolves to the same folder is left as it is; added reports
// whether the file changed. A config without targets: gets them above
// its repositories:, so a file that ended with its repositories still
// does.
func AddTarget(env hostenv.Env, name, dir string, kinds *repository.Registry) (added bool, err error) {
	d, err := openDocument(env, name, kinds)
	if err != nil {
		return false, err
	}
	want := absPath(d.env, d.cfg.Workspace, dir, "")
	for _, t := range d.cfg.Targets {
		if t.Dir == want {
			return false, nil
		}
	}
	v, err := scalar(dir)
	if err != nil {
		return false, fmt.Errorf("target %s: %w", dir, err)
	}
	if err := d.appendEntry("targets", []string{"- dir: " + v}, "repositories"); err != nil {
		return false, &Error{File: d.file, Errs: []error{err}}
	}
	if _, err := d.save(); err != nil {
		return false, err
	}
	return true, nil
}

// AddAgentsMD adds {agents_md: FILE} to the targets of the config file at
// name, as AddTarget adds a folder: an entry for the same file is left as
// it is, and added reports whether the file changed.
func AddAgentsMD(env hostenv.Env, name, file string, kinds *repository.Registry) (added bool, err error) {
	d, err := openDocument(env, name, kinds)
	if err != nil {
		return false, err
	}
	want := absPath(d.env, d.cfg.Workspace, file, "")
	for _, a := range d.cfg.AgentsMD {
		if a.Path == want {
			return false, nil
		}
	}
	v, err := scalar(file)
	if err != nil {
		return false, fmt.Errorf("agents_md %s: %w", file, err)
	}
	if err := d.appendEntry("targets", []string{"- agents_md: " + v}, "repositories"); err != nil {
		return false, &Error{File: d.file, Errs: []error{err}}
	}
	if _, err := d.save(); err != nil {
		return false, err
	}
	return true, nil
}

// ErrNotFound is returned by the editing functions for a source or skill
// the config does not name.
var ErrNotFound = errors.New("not in the config")

// ErrLastSkill is returned by RemoveSkill for the only name of a source's
// skills: a source with nothing selected takes every skill, the opposite
// of what removing a skill asks for.
var ErrLastSkill = errors.New("cannot remove the last selected skill")
