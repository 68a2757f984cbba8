// Package opencode reads what OpenCode did with skills from the sessions
// it keeps: JSON files up to release 1.1, a SQLite database from 1.2.
//
// Formats followed (sst/opencode, now anomalyco/opencode; see
// testdata/agents/opencode/README.md for the files each rule comes from):
//
//   - Up to release 1.1, OpenCode keeps its data in
//     $XDG_DATA_HOME/opencode/storage (~/.local/share/opencode/storage):
//     session/<projectID>/<sessionID>.json (with "directory", the folder the
//     session ran in), message/<sessionID>/<messageID>.json and
//     part/<messageID>/<partID>.json. A tool call is a part of type "tool"
//     with "callID", "tool" and "state" {status, input, time {start, end}
//     in milliseconds}; the file is rewritten as the call runs.
//   - The skill tool is "skill" with input {"name": NAME}: a use. The read
//     tool is "read" with input {"filePath": PATH}: a read of a SKILL.md is
//     a view. Only calls whose state is "completed" ran.
//   - From release 1.2 OpenCode keeps these records in a SQLite database
//     beside storage/: opencode.db (opencode-<channel>.db for other release
//     channels, or $OPENCODE_DB), tables session (id, directory), message
//     and part (id, message_id, session_id, time_created, time_updated in
//     milliseconds, data: the part file's JSON without its ids). Its first
//     start copies storage/ into it, keeping every id, so a call found in
//     both is the same call (its callID) and is counted once. The database
//     is read-only here, from a cursor on time_updated (see sqlite.go).
package opencode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/internal/hostenv"
)

// Name is the agent's name in the table, on the command line and in the
// import state.
const Name = "opencode"

// maxRecord bounds one session or part file; a part holds a tool's output,
// and a skill's is the skill.
const maxRecord = 8 << 20

// maxNameLen bounds a skill name taken from a record.
const maxNameLen = 255

// DataDir is OpenCode's data folder: $XDG_DATA_HOME/opencode, else
// ~/.local/share/opencode (on every system, as OpenCode does).
func DataDir(env hostenv.Env) (string, error) {
	if dir := env.Getenv("XDG_DATA_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "opencode"), nil
	}
	home, err := env.HomeDir()
	if err != nil {
		return "", fmt.Errorf("find OpenCode's data: %w", err)
	}
	return filepath.Join(home, ".local", "share", "opencode"), nil
}

// Register returns what skillsync knows of OpenCode: its sessions.
func Register() agent.Registration {
	return agent.Registration{
		Agent: Name,
		Key:   Name,
		Importer: func(env hostenv.Env, root string) (agent.Importer, bool, error) {
			dir, err := DataDir(env)
			if err != nil {
				return nil, false, err
			}
			info, err := os.Stat(dir)
			im := New(root, dir)
			im.Database = env.Getenv("OPENCODE_DB")
			return im, err == nil && info.IsDir(), nil
		},
	}
}

// Importer reads the sessions OpenCode ran in one workspace.
type Importer struct {
	ws   agent.Workspace // the workspace as given and as its links resolve
	data string
	// Database is $OPENCODE_DB of the run: a database OpenCode was told
	// to use, absolute or relative to the data folder; "" for none.
	Database string
	// maxRows, when set, bounds the parts one import reads from one
	// database instead of the package's bound (tests set it small).
	maxRows int
}

// New returns an importer of the sessions of the workspace at root (an
// absolute path) that OpenCode keeps under data (DataDir).
func New(root, data string) *Importer {
	return &Importer{ws: agent.NewWorkspace(root), data: data}
}

// Name returns "opencode".
func (im *Importer) Name() string { return Name }

// dirs lists the names of the folders in dir, sorted; links and files are
// left alone, and a missing dir is empty.
func dirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, err
}

// files lists the regular .json files in dir, sorted.
func files(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".json") {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// readJSON reads a record of at most maxRecord bytes without following a
// link.
func readJSON(path string, v any) error {
	data, err := atomicfile.ReadBounded(path, maxRecord)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// Import reads the tool calls of every session OpenCode ran in the
// workspace, from its JSON files and its databases: the skill tool's are
// uses, the read tool's of a SKILL.md views. A part file is read again
// only when its size or time changed, a database only from the parts
// written since the last import. A database that cannot be read (not
// SQLite, corrupt, of another schema) is said in the batch's Unreadable,
// and the rest is read.
func (im *Importer) Import(ctx context.Context, since time.Time, done agent.Marks) (*agent.Batch, error) {
	b := &agent.Batch{Marks: agent.Marks{}}
	storage := filepath.Join(im.data, "storage")
	projects, err := dirs(filepath.Join(storage, "session"))
	if err != nil {
		return nil, fmt.Errorf("list OpenCode sessions in %s: %w", storage, err)
	}
	for _, project := range projects {
		for _, name := range files(filepath.Join(storage, "session", project)) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			var ses struct {
				ID        string `json:"id"`
				Directory string `json:"directory"`
			}
			if err := readJSON(filepath.Join(storage, "session", project, name), &ses); err != nil {
				b.Skip(filepath.Join(storage, "session", project, name))
				continue
			}
			if !im.ws.Within(ses.Directory) || ses.ID != strings.TrimSuffix(name, ".json") || !fs.ValidPath(ses.ID) || strings.Contains(ses.ID, "/") {
				continue
			}
			if err := im.session(ctx, b, storage, ses.ID, since, done); err != nil {
				return nil, err
			}
		}
	}
	if err := im.importDatabases(ctx, b, since, done); err != nil {
		return nil, err
	}
	return b, nil
}

// session reads the parts of the messages of one session.
func (im *Importer) session(ctx context.Context, b *agent.Batch, storage, id string, since time.Time, done agent.Marks) error {
	for _, msg := range files(filepath.Join(storage, "message", id)) {
		msgID := strings.TrimSuffix(msg, ".json")
		for _, part := range files(filepath.Join(storage, "part", msgID)) {
			if err := ctx.Err(); err != nil {
				return err
			}
			key := "part/" + msgID + "/" + part
			path := filepath.Join(storage, "part", msgID, part)
			info, err := os.Lstat(path)
			if err != nil || !info.Mode().IsRegular() {
				continue
			}
			mark := agent.Mark{Size: info.Size(), ModTime: info.ModTime().UTC(), Offset: info.Size(), Hash: "whole"}
			if prev, ok := done[key]; ok && prev.Size == mark.Size && prev.ModTime.Equal(mark.ModTime) {
				b.Marks[key] = prev
				continue
			}
			var p partRecord
			if err := readJSON(path, &p); err != nil {
				if errors.Is(err, atomicfile.ErrTooLarge) {
					b.TooLong++
				} else {
					b.Skip(path)
				}
				b.Marks[key] = mark
				continue
			}
			b.Marks[key] = mark
			b.Files++
			if _, ok := done[key]; ok {
				b.Rewritten++
			}
			if ev, ok := p.event(); ok {
				if ev.At.Before(since) {
					b.Before++
					continue
				}
				ev.Where = path
				ev.Path = im.ws.Configured(ev.Path)
				b.Events = append(b.Events, ev)
			}
		}
	}
	return nil
}

// partRecord is the part of a part file read here.
type partRecord struct {
	Type   string `json:"type"`
	CallID string `json:"callID"`
	Tool   string `json:"tool"`
	State  struct {
		Status string `json:"status"`
		Input  struct {
			Name     string `json:"name"`
			FilePath string `json:"filePath"`
		} `json:"input"`
		Time struct {
			Start int64 `json:"start"`
			End   int64 `json:"end"`
		} `json:"time"`
	} `json:"state"`
}

// event reads a completed skill or read call.
func (p *partRecord) event() (agent.Event, bool) {
	if p.Type != "tool" || p.State.Status != "completed" || p.State.Time.Start <= 0 {
		return agent.Event{}, false
	}
	ev := agent.Event{ID: p.CallID, At: time.UnixMilli(p.State.Time.Start).UTC()}
	switch p.Tool {
	case "skill":
		name := strings.TrimSpace(p.State.Input.Name)
		if name == "" || len(name) > maxNameLen {
			return agent.Event{}, false
		}
		ev.Skill = name
	case "read":
		fp := p.State.Input.FilePath
		if !filepath.IsAbs(fp) || !strings.EqualFold(filepath.Base(fp), "SKILL.md") {
			return agent.Event{}, false
		}
		ev.Path, ev.View = filepath.Clean(fp), true
	default:
		return agent.Event{}, false
	}
	return ev, true
}

var _ agent.Importer = (*Importer)(nil)
