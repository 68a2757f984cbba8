package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/skillsync/skillsync/internal/atomicfile"
)

// Mark is how far one record file was read: every complete line before
// Offset was consumed. Size and ModTime are the file's when it was read,
// so an untouched file is passed over without reading it; Hash is the
// SHA-256 of the bytes before Offset, so a file that was rewritten rather
// than appended to is told apart and read again from the start.
type Mark struct {
	Offset  int64     `json:"offset"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime"`
	Hash    string    `json:"sha256"`
	// Cwd is the working folder the lines before Offset left a session
	// in, where the record's first line does not say it (a Codex
	// session's turn_context): the next read goes on from there.
	Cwd string `json:"cwd,omitempty"`
	// Chain is, for a Codex session, the hash of the conversation before
	// Offset (its session and its messages and calls, not their times),
	// which the ids of the skills the user named are made of: the next
	// read goes on from it.
	Chain string `json:"chain,omitempty"`
	// Row is, for a database, the largest rowid of the rows read before
	// it: rows past it are new whatever their times say (written after
	// the clock stepped back); 0 for none known.
	Row int64 `json:"row,omitempty"`
	// Packed is, for a record read compressed (Zstd.ReadNew), the size of
	// the compressed file, whose modification time is then ModTime:
	// Offset, Size and Hash are of the bytes it decompresses to, so a
	// mark goes on from the plain file to the compressed one and back,
	// and an untouched compressed file is not decompressed again. 0 for
	// a record read as it is.
	Packed int64 `json:"packed,omitempty"`
}

// Marks are an importer's marks, keyed by each record's path relative to
// the agent's folder. Keys are only ever compared with paths the importer
// found itself, never opened.
type Marks map[string]Mark

// StateVersion is the format of the imported file. Seen was added within
// version 1: a file without it has no calls seen, and an older skillsync
// ignores it.
const StateVersion = 1

// maxStateSize bounds what LoadState reads.
const maxStateSize = 32 << 20

// State is the content of the workspace's imported file: each agent's
// marks, and the calls of each agent already counted.
type State struct {
	Version int              `json:"version"`
	Agents  map[string]Marks `json:"agents"`
	Seen    map[string]*Seen `json:"seen,omitempty"`
	// Pending are, per agent, an import whose uses may not be in the
	// usage file yet, and what its marks and calls seen become once they
	// are. Agents and Seen change only then: the import after one that
	// stopped asks the usage file (Recorder.LastImport), and takes the
	// pending import or drops it, so its records are read again.
	Pending map[string]*Pending `json:"pending,omitempty"`
	// Last is, per agent, the id of the last import whose uses the usage
	// file holds with these marks (Recorder.LastImport): a usage file
	// that names a later one holds calls the marks would read again (the
	// imported file brought back from a backup). An older skillsync
	// leaves it out, and then it is not judged.
	Last map[string]string `json:"last,omitempty"`
}

// Pending is an import under way (State.Pending).
type Pending struct {
	ID    string               `json:"id"`
	Marks Marks                `json:"marks"`
	Added map[string]time.Time `json:"added,omitempty"` // the calls it counts, as Seen keeps them
}

// commit makes the agent's marks and calls seen what an import left:
// marks, and the calls added; id names the import in the usage file
// ("" for one that wrote none there).
func (s *State) commit(agent string, marks Marks, added map[string]time.Time, id string) {
	s.Agents[agent] = marks
	if id != "" {
		s.Last[agent] = id
	}
	seen := s.Seen[agent]
	if seen == nil {
		seen = &Seen{}
	}
	for key, at := range added {
		seen.addKey(key, at)
	}
	seen.trim(MaxSeen)
	s.Seen[agent] = seen
	delete(s.Pending, agent)
}

// LoadState reads the imported file at path without following a symbolic
// link. A missing file is an empty state. A file that is not a regular
// file, is too large, does not parse or is of a newer version is an error
// naming it: skillsync does not guess how far an import got.
func LoadState(path string) (*State, error) {
	empty := &State{Version: StateVersion, Agents: map[string]Marks{}, Seen: map[string]*Seen{}, Pending: map[string]*Pending{}, Last: map[string]string{}}
	data, err := atomicfile.ReadBounded(path, maxStateSize)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return empty, nil
	case errors.Is(err, atomicfile.ErrSymlink):
		return nil, fmt.Errorf("import state %s is a symbolic link; skillsync does not follow links in the workspace, remove it", path)
	case errors.Is(err, atomicfile.ErrNotRegular):
		return nil, fmt.Errorf("import state: %w; move it away", err)
	case errors.Is(err, atomicfile.ErrTooLarge):
		return nil, fmt.Errorf("import state %s is larger than %d bytes; %s", path, maxStateSize, startOver(path))
	case err != nil:
		return nil, fmt.Errorf("import state: %w", err)
	}
	var s State
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("import state %s does not parse (%v); %s", path, err, startOver(path))
	}
	if s.Version > StateVersion {
		return nil, fmt.Errorf("import state %s is version %d, newer than this skillsync reads (%d); upgrade skillsync", path, s.Version, StateVersion)
	}
	s.Version = StateVersion
	if s.Agents == nil {
		s.Agents = map[string]Marks{}
	}
	if s.Seen == nil {
		s.Seen = map[string]*Seen{}
	}
	if s.Pending == nil {
		s.Pending = map[string]*Pending{}
	}
	if s.Last == nil {
		s.Last = map[string]string{}
	}
	for k, v := range s.Seen {
		if v == nil {
			delete(s.Seen, k)
		}
	}
	return &s, nil
}

// startOver says how to go on without the import state at path: its
// counts are in the usage file already, so an import without it must
// pass over the calls it had counted, or count them all again. The last
// import wrote the file; its time bounds them.
func startOver(path string) string {
	info, err := os.Lstat(path)
	if err != nil {
		return "move it away and run skillsync usage import --since the time of the last import; without --since every call on disk is counted again"
	}
	since := info.ModTime().UTC().Format(time.RFC3339)
	return fmt.Sprintf("move it away and run skillsync usage import --since %s (when the last import wrote it): without --since every call on disk is counted again", since)
}

// Save writes the state to path atomically: a temporary file in the same
// directory, fsynced and renamed over path, which replaces a link there
// rather than writing through it. Keys come out sorted.
func (s *State) Save(path string) error {
	return atomicfile.WriteJSON(path, s, 0o644)
}
