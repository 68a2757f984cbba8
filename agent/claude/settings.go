package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skillsync/skillsync/agent"
)

// HookCommand is the command the hook runs.
const HookCommand = "skillsync use --hook claude"

// HookMatcher is the tools the hook runs for: the skill tool (a use) and
// Read (a view, when the file is a SKILL.md).
const HookMatcher = SkillTool + "|" + ReadTool

// SettingsFile and MCPFile are where a project keeps its Claude Code
// settings and its MCP servers, relative to the project.
const (
	SettingsFile = ".claude/settings.json"
	MCPFile      = ".mcp.json"
)

// maxConfigSize bounds a settings file read; larger is not a settings file.
const maxConfigSize = 4 << 20

// Outcome says what a registration did.
type Outcome = agent.Outcome

// What a registration can do.
const (
	Added   = agent.Added
	Present = agent.Present
	Kept    = agent.Kept
)

// InstallHook adds to the project's .claude/settings.json a PostToolUse
// hook for the skill tool that runs HookCommand, and returns the file's
// path and what it did. Everything else in the file (other settings, other
// hooks, keys skillsync does not know, their order) is kept; a hook that
// already runs skillsync use --hook claude is left as it is, so running
// twice adds one hook. A file that does not parse as a JSON object, or
// whose hooks are not shaped as Claude Code reads them, is refused with an
// error and left untouched. The file is replaced atomically; a symbolic
// link at .claude or at the file is refused, never followed.
func InstallHook(project string) (string, Outcome, error) {
	ch, err := PlanHook(project)
	if err != nil {
		return ch.Path, "", err
	}
	return ch.Path, ch.Outcome, ch.Write()
}

// PlanHook returns the change InstallHook writes, writing nothing.
func PlanHook(project string) (agent.Change, error) {
	path := filepath.Join(project, filepath.FromSlash(SettingsFile))
	return plan(path, func(doc *object) (Outcome, error) {
		hooks, err := doc.object("hooks")
		if err != nil {
			return "", err
		}
		var groups []json.RawMessage
		if raw, ok := hooks.get("PostToolUse"); ok {
			if err := json.Unmarshal(raw, &groups); err != nil {
				return "", fmt.Errorf("hooks.PostToolUse is not a list of matcher groups: %w", err)
			}
		}
		upgraded := false
		for i, g := range groups {
			if !hasHook(g) {
				continue
			}
			// A hook skillsync installed before matched the skill tool
			// only, so reads of a SKILL.md were never seen: its matcher
			// is widened; any other matcher is the user's.
			ng, ok := widenMatcher(g)
			if !ok {
				return Present, nil
			}
			groups[i], upgraded = ng, true
			break
		}
		if !upgraded {
			group, err := marshal(hookGroup{Matcher: HookMatcher, Hooks: []hook{{Type: "command", Command: HookCommand}}})
			if err != nil {
				return "", err
			}
			groups = append(groups, group)
		}
		// The user's groups go back as they were written: json.Marshal
		// would escape their & < > as \u0026.
		list := []byte("[")
		for i, g := range groups {
			if i > 0 {
				list = append(list, ',')
			}
			list = append(list, g...)
		}
		hooks.set("PostToolUse", append(list, ']'))
		doc.setObject("hooks", hooks)
		return Added, nil
	})
}

// hookGroup and hook are a PostToolUse matcher group as InstallHook
// writes it.
type hookGroup struct {
	Matcher string `json:"matcher"`
	Hooks   []hook `json:"hooks"`
}

type hook struct {
	Type    string `json:"type"`
	Command string `json:"command"`
}

// marshal encodes v without escaping & < > in strings.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// widenMatcher returns group with its matcher "Skill" made HookMatcher,
// or false when the matcher is anything else or the group runs a hook of
// the user's beside skillsync's: that hook would then run on every Read.
func widenMatcher(group json.RawMessage) (json.RawMessage, bool) {
	g, err := parseObject(group)
	if err != nil || !onlyOurHooks(group) {
		return nil, false
	}
	raw, ok := g.get("matcher")
	var m string
	if !ok || json.Unmarshal(raw, &m) != nil || m != SkillTool {
		return nil, false
	}
	v, err := marshal(HookMatcher)
	if err != nil {
		return nil, false
	}
	g.set("matcher", v)
	out, err := g.MarshalJSON()
	return out, err == nil
}

// onlyOurHooks reports whether every hook of a matcher group runs
// skillsync's hook command.
func onlyOurHooks(group json.RawMessage) bool {
	commands, ok := groupCommands(group)
	return ok && !slices.ContainsFunc(commands, func(c string) bool { return !ourCommand(c) })
}

// hasHook reports whether a matcher group runs skillsync's hook command,
// however it is spelled around it (a path to skillsync, extra flags).
func hasHook(group json.RawMessage) bool {
	commands, ok := groupCommands(group)
	return ok && slices.ContainsFunc(commands, ourCommand)
}

// groupCommands returns the commands of a matcher group's hooks, and
// false when the group is not shaped as one.
func groupCommands(group json.RawMessage) ([]string, bool) {
	var g struct {
		Hooks []struct {
			Command string `json:"command"`
		} `json:"hooks"`
	}
	if json.Unmarshal(group, &g) != nil {
		return nil, false
	}
	commands := make([]string, len(g.Hooks))
	for i, h := range g.Hooks {
		commands[i] = h.Command
	}
	return commands, true
}

// ourCommand reports whether a hook's command is skillsync's.
func ourCommand(c string) bool {
	return strings.Contains(c, "skillsync") && strings.Contains(c, "--hook claude")
}

// mcpServer is the entry RegisterMCP writes.
type mcpServer struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// RegisterMCP adds the skillsync MCP server ("skillsync mcp" over stdio)
// to the project's .mcp.json as mcpServers.skillsync, and returns the
// file's path and what it did. Other servers and keys are kept; an
// existing skillsync entry is left as it is (Present when it is the same,
// Kept when the user changed it). The file follows InstallHook's rules.
func RegisterMCP(project string) (string, Outcome, error) {
	ch, err := PlanMCP(project)
	if err != nil {
		return ch.Path, "", err
	}
	return ch.Path, ch.Outcome, ch.Write()
}

// PlanMCP returns the change RegisterMCP writes, writing nothing.
func PlanMCP(project string) (agent.Change, error) {
	path := filepath.Join(project, MCPFile)
	want := mcpServer{Command: "skillsync", Args: []string{"mcp"}}
	return plan(path, func(doc *object) (Outcome, error) {
		servers, err := doc.object("mcpServers")
		if err != nil {
			return "", err
		}
		if raw, ok := servers.get("skillsync"); ok {
			var have mcpServer
			if json.Unmarshal(raw, &have) == nil && have.Command == want.Command && strings.Join(have.Args, " ") == "mcp" {
				return Present, nil
			}
			return Kept, nil
		}
		entry, err := marshal(want)
		if err != nil {
			return "", err
		}
		servers.set("skillsync", entry)
		doc.setObject("mcpServers", servers)
		return Added, nil
	})
}

// plan reads the JSON object at path (an empty object when there is no
// file), lets change edit it, and returns the change that writes it back
// when change added something. The file is read without following a link,
// and its directory must not be a link either.
func plan(path string, change func(*object) (Outcome, error)) (agent.Change, error) {
	none := agent.Change{Path: path}
	dir := filepath.Dir(path)
	if info, err := os.Lstat(dir); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		return none, fmt.Errorf("%s is a symbolic link; skillsync does not write through links, add the entry by hand", dir)
	}
	data, perm, err := agent.ReadSettings(path, maxConfigSize)
	if err != nil {
		return none, err
	}
	doc, err := parseObject(data)
	if err != nil {
		return none, fmt.Errorf("%s does not parse as a JSON object (%v); fix it or add the entry by hand, it was left as it is", path, err)
	}
	out, err := change(doc)
	if err != nil {
		return none, fmt.Errorf("%s: %w; it was left as it is", path, err)
	}
	if out != Added {
		return agent.Change{Path: path, Outcome: out}, nil
	}
	body, err := doc.MarshalJSON()
	if err != nil {
		return none, fmt.Errorf("encode %s: %w", path, err)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, body, "", "  "); err != nil {
		return none, fmt.Errorf("encode %s: %w", path, err)
	}
	pretty.WriteByte('\n')
	return agent.NewChange(path, data, pretty.Bytes(), perm, maxConfigSize), nil
}

// object is a JSON object that keeps its keys in the order they came and
// its values as written, so an edit changes only what it means to.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

// parseObject reads one JSON object; nil or blank data is an empty one.
// Of a key given twice the last value wins, as Claude Code reads it.
func parseObject(data []byte) (*object, error) {
	o := &object{vals: map[string]json.RawMessage{}}
	if len(bytes.TrimSpace(data)) == 0 {
		return o, nil
	}
	if !json.Valid(data) {
		return nil, errors.New("not valid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("the top level is not an object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("an object key is not a string")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		o.set(key, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the top-level object")
	}
	return o, nil
}

func (o *object) get(key string) (json.RawMessage, bool) {
	v, ok := o.vals[key]
	return v, ok
}

func (o *object) set(key string, v json.RawMessage) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

// object returns the member key as an object, an empty one when it is
// missing or null, and an error when it is anything else.
func (o *object) object(key string) (*object, error) {
	raw, ok := o.get(key)
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return &object{vals: map[string]json.RawMessage{}}, nil
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("%q is not an object", key)
	}
	return parseObject(raw)
}

func (o *object) setObject(key string, v *object) {
	data, _ := v.MarshalJSON()
	o.set(key, data)
}

// MarshalJSON writes the members in their order.
func (o *object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := marshal(k)
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
