// Package codex reads what the Codex CLI did with skills from its session
// records ("rollouts").
//
// Formats followed (openai/codex, codex-rs; see testdata/agents/codex/README.md
// for the files each rule comes from):
//
//   - Sessions are JSONL files $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl
//     (CODEX_HOME is ~/.codex unless set). Each line is {timestamp, type,
//     payload}; the first is a "session_meta" whose payload has the
//     session's cwd; "turn_context" lines give the cwd of later turns.
//   - From 0.137.0 a rollout idle for 7 days (by its modification time),
//     below sessions or archived_sessions, is rewritten as
//     <name>.jsonl.zst (one zstd stream, level 3) and the plain file
//     removed (rollout/src/compression.rs); resuming its thread writes the
//     plain file back from it, removes the .zst and appends to the plain
//     one. Both may be there for a moment. The two are one record here:
//     one key in the marks (the plain name), offsets and hashes of the
//     decompressed bytes, the plain file read while both are there.
//   - A skill the user names ($name, or picked in the composer) is injected
//     as a "response_item" user message whose text is
//     <skill>\n<name>NAME</name>\n<path>PATH</path>\n... (SkillInstructions).
//   - Otherwise the model uses a skill by reading its SKILL.md with a shell
//     command (cat, sed, head, tail, less, more, bat, awk), which Codex
//     itself counts as an implicit invocation: a "function_call" (shell:
//     {"command": [...], "workdir"}; shell_command: {"command": "...",
//     "workdir"}; exec_command: {"cmd": "...", "workdir"}) or a
//     "local_shell_call" ({"action": {"command": [...],
//     "working_directory"}}), each with a call_id.
package codex

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/internal/platform"
)

// Name is the agent's name in the table, on the command line and in the
// import state.
const Name = "codex"

// maxDepth is how deep below the sessions folder rollouts are:
// YYYY/MM/DD/rollout.jsonl.
const maxDepth = 4

// archivedDir is the folder beside sessions that Codex moves a rollout to
// when its thread is archived (codex-rs rollout: ARCHIVED_SESSIONS_SUBDIR),
// flat; archivedKey begins the keys of its rollouts in the marks, a prefix
// no rollout below sessions has.
const (
	archivedDir = "archived_sessions"
	archivedKey = "../" + archivedDir + "/"
)

// zstExt ends the name of a rollout Codex compressed (codex-rs
// rollout/src/compression.rs): rollout-<time>-<id>.jsonl.zst.
const zstExt = ".zst"

// isRollout says whether a file named name is a rollout, plain or
// compressed. The name of a compressed one is checked whole: the
// compression's temporary files are not rollouts.
func isRollout(name string) bool {
	return strings.HasSuffix(name, ".jsonl") ||
		strings.HasPrefix(name, "rollout-") && strings.HasSuffix(name, ".jsonl"+zstExt)
}

// maxMeta bounds the first line read to learn a session's cwd; a
// session_meta carries the instructions, tens of KiB at most.
const maxMeta = 1 << 20

// maxNameLen bounds a skill name taken from a record.
const maxNameLen = 255

// SessionsDir is where Codex keeps its rollouts for a user:
// $CODEX_HOME/sessions, else ~/.codex/sessions.
func SessionsDir(env hostenv.Env) (string, error) {
	if dir := env.Getenv("CODEX_HOME"); dir != "" {
		return filepath.Join(dir, "sessions"), nil
	}
	home, err := env.HomeDir()
	if err != nil {
		return "", fmt.Errorf("find Codex's sessions: %w", err)
	}
	return filepath.Join(home, ".codex", "sessions"), nil
}

// Register returns what skillsync knows of the Codex CLI: its rollouts.
func Register() agent.Registration {
	return agent.Registration{
		Agent: Name,
		Key:   Name,
		Importer: func(env hostenv.Env, root string) (agent.Importer, bool, error) {
			dir, err := SessionsDir(env)
			if err != nil {
				return nil, false, err
			}
			info, err := os.Stat(dir)
			return New(root, dir), err == nil && info.IsDir(), nil
		},
	}
}

// Importer reads the rollouts of the Codex sessions of one workspace.
type Importer struct {
	ws       agent.Workspace // the workspace as given and as its links resolve
	sessions string
	limits   agent.Limits
}

// New returns an importer of the sessions of the workspace at root (an
// absolute path) whose rollouts are under sessions (SessionsDir).
func New(root, sessions string) *Importer {
	return &Importer{ws: agent.NewWorkspace(root), sessions: sessions, limits: agent.DefaultLimits()}
}

// Name returns "codex".
func (im *Importer) Name() string { return Name }

// Import reads every rollout of a session started in the workspace from
// where done left it, and returns the skills the user named (uses) and the
// SKILL.md files the model read with a shell command (uses too: that is
// how Codex uses a skill it picked). Rollouts of other folders are passed
// over without being read past their first line. The rollouts of archived
// threads are read too: archiving moves a rollout out of sessions, and
// the calls written since the last import would be lost; those read
// before come again, with the same ids, and count once. A rollout Codex
// compressed is read decompressed, as the plain rollout of its name: the
// calls written before the compression are not lost, and none read
// before it count again.
func (im *Importer) Import(ctx context.Context, since time.Time, done agent.Marks) (*agent.Batch, error) {
	// A link is not followed, nor said: rollouts of every folder are
	// here, and without its first line a link's is not known.
	files, _, err := agent.ListRecords(im.sessions, maxDepth, isRollout)
	if err != nil {
		return nil, fmt.Errorf("list Codex sessions in %s: %w", im.sessions, err)
	}
	type rollout struct{ key, path string }
	var all []rollout
	at := map[string]int{} // key -> its index in all
	add := func(key, path string) {
		// A compressed rollout has the key of the plain one: its mark
		// goes on across the compression and back.
		plain := strings.TrimSuffix(key, zstExt)
		if i, ok := at[plain]; ok {
			// Both, while Codex materializes a compressed rollout it
			// resumes: the plain one is the one it writes to.
			if plain == key {
				all[i].path = path
			}
			return
		}
		at[plain] = len(all)
		all = append(all, rollout{plain, path})
	}
	for _, rel := range files {
		add(filepath.ToSlash(rel), filepath.Join(im.sessions, rel))
	}
	archived := filepath.Join(filepath.Dir(im.sessions), archivedDir)
	files, _, err = agent.ListRecords(archived, 1, isRollout)
	if err != nil {
		return nil, fmt.Errorf("list archived Codex sessions in %s: %w", archived, err)
	}
	for _, name := range files {
		add(archivedKey+name, filepath.Join(archived, name))
	}
	keys := make([]string, len(all))
	for i, r := range all {
		keys[i] = r.key
	}
	done = movedMarks(done, keys)
	z, err := agent.NewZstd() // the compressed rollouts', one at a time
	if err != nil {
		return nil, err
	}
	defer z.Close()
	b := &agent.Batch{Marks: agent.Marks{}}
	for _, r := range all {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		key, path := r.key, r.path
		if m, ok := done[key]; ok && strings.HasSuffix(path, zstExt) && agent.ZstdUntouched(path, m) {
			// Read whole the last time: not even its first line is
			// decompressed again.
			b.Marks[key] = m
			continue
		}
		cwd, err := sessionCwd(path, z)
		if errors.Is(err, agent.ErrCompressed) {
			// Said whatever the session's folder, which cannot be
			// known: a rollout that no longer decompresses loses its
			// calls until it is mended.
			b.Unreadable = append(b.Unreadable, err.Error())
		}
		if err != nil || !im.ws.Within(cwd) {
			if m, ok := done[key]; ok && err != nil {
				b.Marks[key] = m
			}
			continue
		}
		s := &session{im: im, b: b, cwd: resumedCwd(done[key], cwd), since: since}
		if m := done[key]; m.Offset > 0 {
			s.chain, _ = hex.DecodeString(m.Chain)
		}
		read := agent.ReadNew
		if strings.HasSuffix(path, zstExt) {
			read = z.ReadNew
		}
		err = b.ReadRecord(ctx, read, im.limits, done, key, path, func(line []byte, off int64) error {
			if off == 0 {
				// Read from the start: the turn_contexts come again, and
				// the conversation.
				s.cwd, s.chain = cwd, nil
			}
			s.parse(line, fmt.Sprintf("%s@%d", path, off))
			return nil
		})
		if err != nil {
			return nil, err
		}
		if m, ok := b.Marks[key]; ok && m != done[key] {
			// A read that moved the mark: the folder is where it left.
			m.Cwd = ""
			if s.cwd != cwd {
				m.Cwd = s.cwd
			}
			m.Chain = hex.EncodeToString(s.chain)
			b.Marks[key] = m
		}
	}
	return b, nil
}

// movedMarks is done with, for each rollout of keys that has no mark of
// its own, the mark of the rollout of that name it was moved from:
// archiving moves a rollout from sessions to archivedDir, and taking it
// out of the archive moves it back. The read goes on where it left, and
// the calls before the mark are not read again (ReadNew reads from the
// start a file whose bytes before the mark differ). Read again, the
// skills the user named before would come with ids made another way than
// an older skillsync made them (by their time, before the conversation's
// hash), and count twice. done itself is not changed.
func movedMarks(done agent.Marks, keys []string) agent.Marks {
	var out agent.Marks
	var byName map[string][]string // rollout name -> the keys marked
	for _, key := range keys {
		if _, ok := done[key]; ok {
			continue
		}
		if byName == nil {
			byName = map[string][]string{}
			for k := range done {
				byName[path.Base(k)] = append(byName[path.Base(k)], k)
			}
		}
		for _, from := range byName[path.Base(key)] {
			// From the other folder: sessions, or the archive.
			if strings.HasPrefix(from, archivedKey) != strings.HasPrefix(key, archivedKey) {
				if out == nil {
					out = maps.Clone(done)
				}
				out[key] = done[from]
				break
			}
		}
	}
	if out == nil {
		return done
	}
	return out
}

// resumedCwd is the working folder a read that goes on from m starts in:
// the one the lines before m's offset left (a turn_context may move it),
// else the session_meta's.
func resumedCwd(m agent.Mark, meta string) string {
	if m.Offset > 0 && filepath.IsAbs(m.Cwd) {
		return filepath.Clean(m.Cwd)
	}
	return meta
}

// sessionCwd reads the cwd of the session_meta on the first line of a
// rollout, reading at most maxMeta bytes (decompressed, for a compressed
// one), without following a link. A compressed rollout that does not
// decompress, with z, is an error wrapping agent.ErrCompressed.
func sessionCwd(path string, z *agent.Zstd) (string, error) {
	var r io.ReadCloser
	if strings.HasSuffix(path, zstExt) {
		f, err := z.Open(path)
		if err != nil {
			return "", err
		}
		r = f
	} else {
		f, err := platform.OpenFile(path, os.O_RDONLY, 0)
		if err != nil {
			return "", err
		}
		if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
			f.Close()
			return "", fmt.Errorf("%s is not a regular file", path)
		}
		r = f
	}
	defer r.Close()
	line, err := firstLine(r)
	if err != nil {
		return "", err
	}
	var l struct {
		Type    string `json:"type"`
		Payload struct {
			Cwd string `json:"cwd"`
		} `json:"payload"`
	}
	if json.Unmarshal(bytes.TrimSpace(line), &l) != nil || l.Type != "session_meta" || !filepath.IsAbs(l.Payload.Cwd) {
		return "", fmt.Errorf("%s does not begin with a session_meta line", path)
	}
	return filepath.Clean(l.Payload.Cwd), nil
}

// firstLine reads the first line of r, up to maxMeta bytes: the whole of
// r when it holds no newline within them.
func firstLine(r io.Reader) ([]byte, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, maxMeta), 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return line, nil
		case err != nil:
			return nil, err
		}
		return line, nil
	}
}

// session is the reading of one rollout.
type session struct {
	im    *Importer
	b     *agent.Batch
	cwd   string
	since time.Time
	// chain is the hash of the conversation read so far (see link).
	chain []byte
}

// line is a rollout line.
type line struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

// item is the part of a response_item (or a turn_context) read here.
type item struct {
	Type      string `json:"type"`
	Role      string `json:"role"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Cwd       string `json:"cwd"`
	TurnID    string `json:"turn_id"`
	Content   []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	Action struct {
		Command          []string `json:"command"`
		WorkingDirectory string   `json:"working_directory"`
	} `json:"action"`
}

var (
	skillTag     = []byte(`<skill>`)
	skillDoc     = []byte(`SKILL.md`)
	turnContext  = []byte(`"turn_context"`)
	responseItem = []byte(`"response_item"`)
	sessionMeta  = []byte(`"session_meta"`)
)

// parse adds the events of one rollout line, and links it to the
// conversation. Lines that can hold neither are passed over before
// decoding; a line that does not parse counts as malformed where it could
// hold an event.
func (s *session) parse(raw []byte, where string) {
	events := bytes.Contains(raw, skillTag) || bytes.Contains(raw, skillDoc) || bytes.Contains(raw, turnContext)
	if !events && !bytes.Contains(raw, responseItem) && !bytes.Contains(raw, sessionMeta) {
		return
	}
	var l line
	var it item
	if json.Unmarshal(raw, &l) != nil {
		if events {
			s.b.Skip(where)
		}
		if i := agent.TornAt(raw); i > 0 {
			s.parse(raw[i:], where) // the write after a cut one
		}
		return
	}
	if l.Type == "session_meta" {
		s.link(l.Type, l.Payload, item{})
		return
	}
	if json.Unmarshal(l.Payload, &it) != nil {
		if events {
			s.b.Skip(where)
		}
		return
	}
	// The conversation before this line names the skills it injects.
	before := s.chain
	s.link(l.Type, nil, it)
	if l.Type == "turn_context" {
		if filepath.IsAbs(it.Cwd) {
			s.cwd = filepath.Clean(it.Cwd)
		}
		return
	}
	if l.Type != "response_item" {
		return
	}
	var evs []agent.Event
	switch it.Type {
	case "message":
		if it.Role != "user" {
			return
		}
		for i, c := range it.Content {
			if name, path, ok := injected(c.Text); ok {
				sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%x\x00%d", name, path, before, i))
				evs = append(evs, agent.Event{Skill: name, ID: "skill-" + hex.EncodeToString(sum[:16])})
			}
		}
	case "function_call":
		var args struct {
			Command json.RawMessage `json:"command"`
			Cmd     string          `json:"cmd"`
			Workdir string          `json:"workdir"`
		}
		if json.Unmarshal([]byte(it.Arguments), &args) != nil {
			return // a tool whose arguments are not JSON reads no file here
		}
		script := args.Cmd
		var argv []string
		if json.Unmarshal(args.Command, &argv) != nil {
			json.Unmarshal(args.Command, &script)
		}
		for _, p := range skillReads(argv, script, s.dir(args.Workdir)) {
			evs = append(evs, agent.Event{Path: s.im.ws.Configured(p), ID: it.CallID})
		}
	case "local_shell_call":
		for _, p := range skillReads(it.Action.Command, "", s.dir(it.Action.WorkingDirectory)) {
			evs = append(evs, agent.Event{Path: s.im.ws.Configured(p), ID: it.CallID})
		}
	}
	if len(evs) == 0 {
		return
	}
	t, err := time.Parse(time.RFC3339Nano, l.Timestamp)
	if err != nil {
		s.b.Skip(where)
		return
	}
	if t.Before(s.since) {
		s.b.Before += len(evs)
		return
	}
	for i, ev := range evs {
		ev.At, ev.Where = t.UTC(), where
		if i > 0 && ev.ID != "" {
			ev.ID = fmt.Sprintf("%s#%d", ev.ID, i) // one call reading two SKILL.md files
		}
		s.b.Events = append(s.b.Events, ev)
	}
}

// link adds a line to the hash of the conversation, s.chain, of which the
// ids of the skills the user named are made: the same skill named at the
// same point of the same conversation is one call, in whichever rollout.
// A fork (a backtrack, /fork) is a rollout of its own that begins with its
// session_meta, then a copy of its parent's lines, the parent's
// session_meta first, each stamped with the time of the copy
// (codex-rs core/src/rollout/recorder.rs: every line written is stamped
// now), then its own turns. A session_meta so begins the chain again from
// its session's id, the messages (their role and texts) and calls (their
// call_id) and a turn's turn_id extend it, and no time does: the copy
// links as its parent did, and the fork's own turns go on from there. Lines
// whose copies a later Codex may persist otherwise (reasoning, events) are
// left out. A fork whose own turn repeats, word for word and with no
// turn_id, a turn its parent had at the same point is taken for the
// parent's.
func (s *session) link(kind string, meta json.RawMessage, it item) {
	var part []byte
	switch kind {
	case "session_meta":
		var m struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(meta, &m) != nil {
			return
		}
		sum := sha256.Sum256([]byte("session\x00" + m.ID))
		s.chain = sum[:]
		return
	case "turn_context":
		if it.TurnID == "" {
			return
		}
		part = []byte("turn\x00" + it.TurnID)
	case "response_item":
		switch it.Type {
		case "message", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output", "local_shell_call":
		default:
			return
		}
		part = fmt.Appendf(nil, "%s\x00%s\x00%s", it.Type, it.Role, it.CallID)
		for _, c := range it.Content {
			part = fmt.Appendf(part, "\x00%d:%s", len(c.Text), c.Text)
		}
	default:
		return
	}
	h := sha256.New()
	h.Write(s.chain)
	h.Write(part)
	s.chain = h.Sum(nil)
}

// dir is the directory a command ran in: its workdir, relative to the
// session's cwd.
func (s *session) dir(workdir string) string {
	switch {
	case workdir == "":
		return s.cwd
	case filepath.IsAbs(workdir):
		return filepath.Clean(workdir)
	default:
		return filepath.Join(s.cwd, workdir)
	}
}

// injected reads a skill Codex injected for the user:
// <skill>\n<name>NAME</name>\n<path>PATH</path>...
func injected(text string) (name, path string, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimLeft(text, " \n"), "<skill>")
	if !found {
		return "", "", false
	}
	rest = strings.TrimLeft(rest, "\n")
	after, found := strings.CutPrefix(rest, "<name>")
	if !found {
		return "", "", false
	}
	name, rest, found = strings.Cut(after, "</name>")
	if !found || name == "" || len(name) > maxNameLen || strings.ContainsAny(name, "\n<>") {
		return "", "", false
	}
	if after, found := strings.CutPrefix(strings.TrimLeft(rest, "\n"), "<path>"); found {
		path, _, _ = strings.Cut(after, "</path>")
	}
	return name, path, true
}

// readers are the programs Codex takes a read of a SKILL.md from
// (codex-rs core/src/skills/invocation_utils.rs, command_reads_file).
var readers = map[string]bool{"cat": true, "sed": true, "head": true, "tail": true, "less": true, "more": true, "bat": true, "awk": true}

// shells are the programs whose -c/-lc script is the command.
var shells = map[string]bool{"bash": true, "sh": true, "zsh": true}

// skillReads returns the SKILL.md files a command reads with one of the
// readers, absolute and cleaned: argv as given, or script split into its
// simple commands. A shell's -c/-lc script is read as script.
func skillReads(argv []string, script, dir string) []string {
	if len(argv) >= 3 && shells[filepath.Base(argv[0])] && (argv[1] == "-c" || argv[1] == "-lc") {
		script, argv = argv[2], nil
	}
	var cmds [][]string
	if argv != nil {
		cmds = [][]string{argv}
	} else {
		cmds = splitScript(script)
	}
	var out []string
	seen := map[string]bool{}
	for _, c := range cmds {
		if len(c) < 2 || !readers[filepath.Base(c[0])] {
			continue
		}
		for _, tok := range c[1:] {
			if strings.HasPrefix(tok, "-") || filepath.Base(tok) != "SKILL.md" {
				continue
			}
			p := tok
			if !filepath.IsAbs(p) {
				if !filepath.IsAbs(dir) {
					continue
				}
				p = filepath.Join(dir, p)
			}
			p = filepath.Clean(p)
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// maxScript bounds the script split into words.
const maxScript = 64 << 10

// splitScript splits a shell script into simple commands of words, with
// single and double quotes and backslashes as the shell reads them, and
// ; & | and newlines between commands. Anything else a shell does
// (expansions, redirections' targets) is left as words, which at worst
// names no SKILL.md.
func splitScript(script string) [][]string {
	if len(script) > maxScript {
		script = script[:maxScript]
	}
	var cmds [][]string
	var cur []string
	var word strings.Builder
	inWord := false
	flushWord := func() {
		if inWord {
			cur = append(cur, word.String())
			word.Reset()
			inWord = false
		}
	}
	flushCmd := func() {
		flushWord()
		if len(cur) > 0 {
			cmds = append(cmds, cur)
			cur = nil
		}
	}
	for i := 0; i < len(script); i++ {
		c := script[i]
		switch {
		case c == '\'':
			inWord = true
			j := strings.IndexByte(script[i+1:], '\'')
			if j < 0 {
				word.WriteString(script[i+1:])
				i = len(script)
				break
			}
			word.WriteString(script[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inWord = true
			for i++; i < len(script) && script[i] != '"'; i++ {
				if script[i] == '\\' && i+1 < len(script) {
					i++
				}
				word.WriteByte(script[i])
			}
		case c == '\\' && i+1 < len(script):
			inWord = true
			i++
			word.WriteByte(script[i])
		case c == ';' || c == '&' || c == '|' || c == '\n' || c == '(' || c == ')':
			flushCmd()
		case c == ' ' || c == '\t':
			flushWord()
		default:
			inWord = true
			word.WriteByte(c)
		}
	}
	flushCmd()
	return cmds
}

var _ agent.Importer = (*Importer)(nil)
