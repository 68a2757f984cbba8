// Package claude reads what Claude Code did with skills: the hook input
// Claude Code sends a PostToolUse hook, and the session transcripts it
// keeps under ~/.claude/projects. It also registers skillsync in a
// project's Claude Code settings (the hook) and MCP config (the server).
//
// Formats followed (Claude Code 2.x, from its hooks reference at
// code.claude.com/docs/en/hooks and transcripts seen in public
// repositories):
//
//   - A hook gets one JSON object on stdin: session_id, transcript_path,
//     cwd, permission_mode, hook_event_name, tool_name, tool_input,
//     tool_response, tool_use_id. Exit 0 is success; exit 2 is a blocking
//     error whose stderr is fed to the model; any other status is a
//     non-blocking error shown to the user.
//   - The skill tool is named "Skill"; its input names the skill in
//     "skill" (earlier 2.0 releases: "command"), sometimes with a plugin
//     prefix ("plugin:name") or a leading slash.
//   - The Read tool's input names the file in "file_path", an absolute
//     path.
//   - Transcripts are JSONL files, one per session (subagents' in
//     <session>/subagents/), in ~/.claude/projects/<folder>/ (or
//     $CLAUDE_CONFIG_DIR/projects), where <folder> is the directory the
//     session started in with every character other than an ASCII letter
//     or digit replaced by "-". Each line is an object with type,
//     timestamp (RFC 3339), cwd, sessionId and message; an assistant
//     message's content holds tool_use blocks {type, id, name, input}.
package claude

import (
	"github.com/skillsync/skillsync/internal/hostenv"

	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillsync/skillsync/agent"
)

// Name is the agent's name on the command line and in the import state.
const Name = "claude"

// SkillTool and ReadTool are the names of Claude Code's tools that use a
// skill and read a file.
const (
	SkillTool = "Skill"
	ReadTool  = "Read"
)

// maxNameLen bounds a skill name taken from a record; longer is no skill.
const maxNameLen = 255

// maxDepth bounds how deep below a project folder transcripts are looked
// for: <folder>/<session>/subagents/<agent>.jsonl is three below.
const maxDepth = 3

// Importer reads the transcripts of the Claude Code sessions of one
// workspace.
type Importer struct {
	ws       agent.Workspace // the workspace as given and as its links resolve
	projects string
	limits   agent.Limits
	// read is agent.ReadNew; tests make it fail.
	read agent.ReadFunc
}

// ProjectsDir is where Claude Code keeps its transcripts for a user:
// $CLAUDE_CONFIG_DIR/projects when that is set, else ~/.claude/projects.
func ProjectsDir(env hostenv.Env) (string, error) {
	if dir := env.Getenv("CLAUDE_CONFIG_DIR"); dir != "" {
		return filepath.Join(dir, "projects"), nil
	}
	home, err := env.HomeDir()
	if err != nil {
		return "", fmt.Errorf("find Claude Code's transcripts: %w", err)
	}
	return filepath.Join(home, ".claude", "projects"), nil
}

// New returns an importer of the sessions of the workspace at root (an
// absolute path) whose transcripts are under projects (ProjectsDir).
func New(root, projects string) *Importer {
	return &Importer{ws: agent.NewWorkspace(root), projects: projects, limits: agent.DefaultLimits(), read: agent.ReadNew}
}

// Name returns "claude".
func (im *Importer) Name() string { return Name }

// FolderName is the name of the folder Claude Code keeps the transcripts
// of sessions started in dir under: dir with every character other than an
// ASCII letter or digit replaced by "-". Claude Code replaces UTF-16 code
// units, so a character outside the Basic Multilingual Plane becomes two.
func FolderName(dir string) string {
	var b strings.Builder
	for _, r := range dir {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
			b.WriteRune(r)
		case r > 0xFFFF:
			b.WriteString("--")
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// folder is one project folder of the workspace: the workspace's own
// (exact) or that of a session started in a folder inside it. own is set
// for either when the folder the session started in is known to be the
// workspace's, not a nested workspace's.
type folder struct {
	name       string
	exact, own bool
}

// folders lists the project folders that may hold the workspace's
// sessions, in name order. A folder whose name only begins like the
// workspace's may be another project's (/a/b-c for /a/b); its lines count
// only when their cwd is inside the workspace.
func (im *Importer) folders() (out []folder, links []string, err error) {
	entries, err := os.ReadDir(im.projects)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read Claude Code's projects folder %s: %w", im.projects, err)
	}
	for _, e := range entries {
		link := e.Type()&fs.ModeSymlink != 0
		if !e.IsDir() && !link {
			continue
		}
		for _, ws := range im.ws.Paths() {
			want := FolderName(ws)
			if e.Name() == want || strings.HasPrefix(e.Name(), want+"-") {
				fo := folder{name: e.Name(), exact: e.Name() == want, own: e.Name() == want}
				if !fo.exact {
					var nested bool
					if fo.own, nested = im.started(ws, strings.TrimPrefix(e.Name(), want)); nested && !fo.own {
						// Sessions started in a nested workspace are its
						// own, wherever they went.
						break
					}
				}
				if link {
					// Its calls are not counted: said, not passed over.
					links = append(links, e.Name())
				} else {
					out = append(out, fo)
				}
				break
			}
		}
	}
	return out, links, nil
}

// Import reads every transcript of the workspace's sessions from where
// done left it and returns the skill tool calls (uses) and the reads of a
// file named SKILL.md (views) it finds. Which SKILL.md files are the
// workspace's skills is the caller's to decide. A transcript that cannot
// be read is listed in the batch's Unreadable and keeps its mark.
func (im *Importer) Import(ctx context.Context, since time.Time, done agent.Marks) (*agent.Batch, error) {
	folders, links, err := im.folders()
	if err != nil {
		return nil, err
	}
	b := &agent.Batch{Marks: agent.Marks{}}
	for _, name := range links {
		b.Unreadable = append(b.Unreadable, fmt.Sprintf("%s is a symbolic link; skillsync does not follow links in Claude Code's projects folder: move the folder there", filepath.Join(im.projects, name)))
	}
	for _, fo := range folders {
		files, linked, err := agent.ListJSONL(filepath.Join(im.projects, fo.name), maxDepth)
		if err != nil {
			return nil, fmt.Errorf("list Claude Code transcripts in %s: %w", filepath.Join(im.projects, fo.name), err)
		}
		for _, rel := range linked {
			b.Unreadable = append(b.Unreadable, fmt.Sprintf("%s is a symbolic link; skillsync does not follow links in Claude Code's projects folder: move the transcript there", filepath.Join(im.projects, fo.name, rel)))
		}
		for _, rel := range files {
			key := fo.name + "/" + filepath.ToSlash(rel)
			path := filepath.Join(im.projects, fo.name, rel)
			err := b.ReadRecord(ctx, im.read, im.limits, done, key, path, func(line []byte, off int64) error {
				im.parse(b, line, fmt.Sprintf("%s@%d", path, off), fo, since)
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

// line is what a transcript line holds that matters here.
type line struct {
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	Cwd       string `json:"cwd"`
	Message   struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// block is one content block of a message.
type block struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

var (
	toolUse     = []byte(`"tool_use"`)
	commandName = []byte(`<command-name>/`)
)

// parse adds the events of one transcript line to b. Lines without a tool
// call or a slash command are passed over before any decoding; a line that
// does not parse, or has an event but no valid timestamp, counts as
// malformed.
func (im *Importer) parse(b *agent.Batch, raw []byte, where string, fo folder, since time.Time) {
	hasTool, hasCommand := bytes.Contains(raw, toolUse), bytes.Contains(raw, commandName)
	if !hasTool && !hasCommand {
		return
	}
	var l line
	if err := json.Unmarshal(raw, &l); err != nil {
		b.Skip(where)
		if i := agent.TornAt(raw); i > 0 {
			im.parse(b, raw[i:], where, fo, since) // the write after a cut one
		}
		return
	}
	if !im.belongs(l.Cwd, fo) {
		return
	}
	if hasCommand && l.Type == "user" {
		im.slash(b, l, where, since)
		return
	}
	var blocks []block
	if len(l.Message.Content) == 0 || l.Message.Content[0] != '[' {
		return // text content holds no tool call
	}
	if err := json.Unmarshal(l.Message.Content, &blocks); err != nil {
		b.Skip(where)
		return
	}
	var at time.Time
	for _, bl := range blocks {
		if bl.Type != "tool_use" {
			continue
		}
		ev, ok, bad := event(bl.Name, bl.Input, l.Cwd)
		if bad {
			b.Skip(where)
		}
		if !ok {
			continue
		}
		if at.IsZero() {
			t, err := time.Parse(time.RFC3339Nano, l.Timestamp)
			if err != nil {
				b.Skip(where)
				return
			}
			at = t.UTC()
		}
		if at.Before(since) {
			b.Before++
			continue
		}
		ev.At, ev.ID, ev.Where = at, bl.ID, where
		ev.Path = im.ws.Configured(ev.Path)
		b.Events = append(b.Events, ev)
	}
}

// slash adds the skill a user started by typing /name: Claude Code
// writes a user line whose content (a string, or text blocks) holds
// <command-name>/name</command-name>, and runs no skill tool for it. The
// call has no tool_use id; its id is made of the name and the line's
// timestamp, which copies of the line into a resumed or forked session
// keep.
func (im *Importer) slash(b *agent.Batch, l line, where string, since time.Time) {
	var text string
	if err := json.Unmarshal(l.Message.Content, &text); err != nil {
		var blocks []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(l.Message.Content, &blocks) != nil {
			b.Skip(where)
			return
		}
		for _, bl := range blocks {
			if bl.Type == "text" && strings.Contains(bl.Text, string(commandName)) {
				text = bl.Text
				break
			}
		}
	}
	name := commandSkill(text)
	if name == "" {
		return
	}
	t, err := time.Parse(time.RFC3339Nano, l.Timestamp)
	if err != nil {
		b.Skip(where)
		return
	}
	if t.Before(since) {
		b.Before++
		return
	}
	sum := sha256.Sum256([]byte(name + "\x00" + l.Timestamp))
	b.Events = append(b.Events, agent.Event{Skill: name, Source: agent.FromSlash, At: t.UTC(),
		ID: "slash-" + hex.EncodeToString(sum[:16]), Where: where})
}

// commandSkill returns the name in the first <command-name>/name
// </command-name> of text, "" for none or for a name that could be no
// skill's.
func commandSkill(text string) string {
	_, rest, ok := strings.Cut(text, string(commandName))
	if !ok {
		return ""
	}
	name, _, ok := strings.Cut(rest, "</command-name>")
	if !ok || name == "" || len(name) > maxNameLen || strings.ContainsAny(name, " \t\n/<>") {
		return ""
	}
	return name
}

// belongs reports whether a line of folder fo is the workspace's: a line
// whose cwd is inside the workspace is; in a folder of a session started
// in the workspace (own), so is one whose cwd is elsewhere (the session
// changed directory), unless that cwd is in another project whose folder
// name is the same: that project itself, or a folder below it where its
// session went (/a/my.ws/src for the workspace /a/my_ws).
func (im *Importer) belongs(cwd string, fo folder) bool {
	if cwd != "" && im.ws.Within(cwd) {
		return true
	}
	if !fo.own {
		return false
	}
	if cwd == "" {
		return true
	}
	for d := filepath.Clean(cwd); ; d = filepath.Dir(d) {
		if FolderName(d) == fo.name {
			return false
		}
		if filepath.Dir(d) == d {
			return true
		}
	}
}

// maxStartDepth bounds how deep below the workspace the folder a session
// started in is looked for.
const maxStartDepth = 16

// started finds the folders below the workspace folder ws where a session
// whose project folder is named FolderName(ws)+rest may have started, and
// reports whether one of them is the workspace's (own) and whether one is
// in a workspace nested in it. The name alone is ambiguous ("-" stands for
// "/", "." and more), so the folders that exist decide.
func (im *Importer) started(ws, rest string) (own, nested bool) {
	for _, d := range foldersNamed(ws, rest, maxStartDepth) {
		if im.ws.Within(d) {
			own = true
		} else {
			nested = true
		}
	}
	return own, nested
}

// foldersNamed returns the folders below dir whose path from it, as
// FolderName writes a path, is rest ("-sub-x" for dir/sub/x or
// dir/sub.x). Links are not followed.
func foldersNamed(dir, rest string, depth int) []string {
	if depth == 0 || rest == "" {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		part := "-" + FolderName(e.Name())
		switch {
		case rest == part:
			out = append(out, filepath.Join(dir, e.Name()))
		case strings.HasPrefix(rest, part+"-"):
			out = append(out, foldersNamed(filepath.Join(dir, e.Name()), rest[len(part):], depth-1)...)
		}
	}
	return out
}

// event reads one tool call: the skill tool is a use of the skill it
// names, a read of a file named SKILL.md a view. ok is false for any other
// call; bad is set for a skill or read call whose input does not parse or
// names nothing usable.
func event(tool string, input json.RawMessage, cwd string) (ev agent.Event, ok, bad bool) {
	switch tool {
	case SkillTool:
		var in struct {
			Skill   string `json:"skill"`
			Command string `json:"command"`
		}
		if err := json.Unmarshal(input, &in); err != nil {
			return ev, false, true
		}
		name := skillName(in.Skill, in.Command)
		if name == "" {
			return ev, false, true
		}
		return agent.Event{Skill: name}, true, false
	case ReadTool:
		var in struct {
			FilePath string `json:"file_path"`
		}
		if err := json.Unmarshal(input, &in); err != nil || in.FilePath == "" {
			return ev, false, true
		}
		p := in.FilePath
		if !strings.EqualFold(filepath.Base(p), "SKILL.md") {
			return ev, false, false
		}
		if !filepath.IsAbs(p) {
			if cwd == "" || !filepath.IsAbs(cwd) {
				return ev, false, true
			}
			p = filepath.Join(cwd, p)
		}
		return agent.Event{Path: filepath.Clean(p), View: true}, true, false
	}
	return ev, false, false
}

// skillName is the name the skill tool was called with: "skill", else the
// older "command", without a leading slash. A plugin's skill
// ("plugin:name") keeps its prefix and so matches no catalog skill.
func skillName(skill, command string) string {
	name := skill
	if name == "" {
		name = command
	}
	name = strings.TrimPrefix(strings.TrimSpace(name), "/")
	if name == "" || len(name) > maxNameLen {
		return ""
	}
	return name
}

var _ agent.Importer = (*Importer)(nil)
