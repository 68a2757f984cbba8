package materialize

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/internal/platform"
	"github.com/skillsync/skillsync/skill"
	"github.com/skillsync/skillsync/workspace"
)

// An AGENTS.md target: for agents that read no skills folder of their own
// but do read AGENTS.md (Aider with read: AGENTS.md, and others), the list
// of skills goes into that file between two markers, as OpenSkills' sync
// does, and nothing else of the file is touched.

// The markers around skillsync's block in an AGENTS.md file.
const (
	AgentsMDBegin = "<!-- skillsync:begin -->"
	AgentsMDEnd   = "<!-- skillsync:end -->"
)

// maxAgentsMD bounds what is read of an AGENTS.md file.
const maxAgentsMD = 8 << 20

// ErrOutsideWorkspace is wrapped by WriteAgentsMD's error for a link that
// leads out of the workspace.
var ErrOutsideWorkspace = errors.New("leads outside the workspace")

// AgentsMDBlock is the block WriteAgentsMD keeps in the file: the
// markers around body, which ends in a line break.
func AgentsMDBlock(body string) string {
	if body != "" && !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	return AgentsMDBegin + "\n" + body + AgentsMDEnd + "\n"
}

// SpliceAgentsMD returns old with skillsync's block made block: the text
// from the first begin marker to the end marker after it (and the line
// break that ends it) is replaced, and any later block, a copy a merge
// or a paste left that would keep a stale list of skills beside the
// current one, is removed; every other byte stays. A file without
// the markers gets the block appended after a blank line, and an empty one
// is the block. A marker is a line of its own: one quoted in the user's
// prose (inside a sentence, in backticks) or in a fenced code block (an
// example of the block) is text. A begin marker without an end marker is
// an error: where the user's text starts again is not known.
func SpliceAgentsMD(old []byte, block string) ([]byte, error) {
	if crlf(old) {
		// The file's own line breaks (a Windows checkout): a block in
		// another kind would show as changed lines in every diff.
		block = strings.ReplaceAll(strings.ReplaceAll(block, "\r\n", "\n"), "\n", "\r\n")
	}
	fenced := fencedBlocks(old)
	i := unfencedMarkerLine(old, AgentsMDBegin, fenced, 0)
	if i < 0 {
		if unfencedMarkerLine(old, AgentsMDEnd, fenced, 0) >= 0 {
			return nil, fmt.Errorf("it has %s without %s before it", AgentsMDEnd, AgentsMDBegin)
		}
		var b bytes.Buffer
		b.Write(old)
		nl := "\n"
		if crlf(old) {
			nl = "\r\n"
		}
		switch {
		case len(old) == 0:
		case bytes.HasSuffix(old, []byte(nl+nl)):
		case bytes.HasSuffix(old, []byte("\n")):
			b.WriteString(nl)
		default:
			b.WriteString(nl + nl)
		}
		b.WriteString(block)
		return b.Bytes(), nil
	}
	end := blockEnd(old, i, nil)
	if end < 0 {
		return nil, fmt.Errorf("it has %s without %s after it; remove the marker or close it", AgentsMDBegin, AgentsMDEnd)
	}
	var b bytes.Buffer
	b.Write(old[:i])
	b.WriteString(block)
	// A later begin marker without an end is left as text: where the
	// user's text starts again is not known. Its end marker is one
	// outside a fence: one in a fenced example after it (how to write the
	// block) is the user's, and taking it would remove the text between.
	for {
		next := unfencedMarkerLine(old, AgentsMDBegin, fenced, end)
		if next < 0 {
			break
		}
		nextEnd := blockEnd(old, next, fenced)
		if nextEnd < 0 {
			break
		}
		b.Write(old[end:next])
		end = nextEnd
	}
	b.Write(old[end:])
	return b.Bytes(), nil
}

// crlf reports whether b's lines end in \r\n: its first line break does.
func crlf(b []byte) bool {
	i := bytes.IndexByte(b, '\n')
	return i > 0 && b[i-1] == '\r'
}

// blockEnd returns where the block whose begin marker is at i ends: past
// the end marker after it (outside the fenced code blocks fenced lists,
// when it lists any) and the line break that ends that line; -1 when
// there is no end marker.
func blockEnd(b []byte, i int, fenced [][2]int) int {
	j := unfencedMarkerLine(b, AgentsMDEnd, fenced, i+len(AgentsMDBegin))
	if j < 0 {
		return -1
	}
	end := j + len(AgentsMDEnd)
	if bytes.HasPrefix(b[end:], []byte("\r\n")) {
		end += 2
	} else if bytes.HasPrefix(b[end:], []byte("\n")) {
		end++
	}
	return end
}

// markerLine returns where the first line of b at or after from that holds
// marker alone (before a \n, a \r\n, or the end of b) starts; -1 when
// there is none.
func markerLine(b []byte, marker string, from int) int {
	for from < len(b) {
		i := bytes.Index(b[from:], []byte(marker))
		if i < 0 {
			return -1
		}
		start, end := from+i, from+i+len(marker)
		rest := b[end:]
		if (start == 0 || b[start-1] == '\n' || start == len(utf8BOM) && bytes.HasPrefix(b, utf8BOM)) &&
			(len(rest) == 0 || rest[0] == '\n' || bytes.HasPrefix(rest, []byte("\r\n")) || string(rest) == "\r") {
			return start
		}
		from = end
	}
	return -1
}

// utf8BOM is the byte order mark some editors put at the start of a UTF-8
// file: a marker right after it is on the first line.
var utf8BOM = []byte("\xef\xbb\xbf")

// unfencedMarkerLine is markerLine from from on, skipping a marker
// inside one of the fenced code blocks fenced lists (fencedBlocks).
func unfencedMarkerLine(b []byte, marker string, fenced [][2]int, from int) int {
	for {
		i := markerLine(b, marker, from)
		if i < 0 || !slices.ContainsFunc(fenced, func(f [2]int) bool { return f[0] <= i && i < f[1] }) {
			return i
		}
		from = i + len(marker)
	}
}

// fencedBlocks returns where b's fenced code blocks are, each from its
// opening fence line to the end of its closing one: a line of three or
// more backticks or tildes (indented three spaces at most), closed by a
// line of at least as many of the same character and nothing else but
// blanks. A fence that is never closed is left out: the block skillsync
// appends after it must be found again by the next sync.
func fencedBlocks(b []byte) [][2]int {
	var out [][2]int
	open, char, width := -1, byte(0), 0
	for start := 0; start < len(b); {
		end := bytes.IndexByte(b[start:], '\n')
		if end < 0 {
			end = len(b)
		} else {
			end += start + 1
		}
		line := bytes.TrimRight(b[start:end], "\r\n")
		if start == 0 {
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		indent := len(line) - len(bytes.TrimLeft(line, " "))
		line = line[indent:]
		if indent <= 3 && len(line) > 0 && (line[0] == '`' || line[0] == '~') {
			c := line[0]
			n := len(line) - len(bytes.TrimLeft(line, string(c)))
			rest := line[n:]
			switch {
			case open < 0 && n >= 3 && !(c == '`' && bytes.IndexByte(rest, '`') >= 0):
				open, char, width = start, c, n
			case open >= 0 && c == char && n >= width && len(bytes.Trim(rest, " \t")) == 0:
				out = append(out, [2]int{open, end})
				open = -1
			}
		}
		start = end
	}
	return out
}

// WriteAgentsMD keeps block (AgentsMDBlock) current in the file at path,
// below the workspace root: the file is made when missing, the block
// appended when the file has none, and replaced when it differs. A file
// that already holds the block is not written at all (same bytes, same
// modification time). The write is atomic and keeps the file's mode. A
// symbolic link at path (or on the way) is followed only when it stays
// within root; otherwise the error wraps ErrOutsideWorkspace. The file is
// then read and written from root's folder held open, following no link
// (platform.Tree): a folder on the way swapped for a link by another
// process after that check is refused with ErrOutsideWorkspace too,
// nothing written. changed reports whether the file was written.
func WriteAgentsMD(root, path, block string) (changed bool, err error) {
	return writeAgentsMD(root, path, block, nil)
}

// writeAgentsMD is WriteAgentsMD; checked, when set, is called once the
// links on the way have been resolved and checked, before the file is
// read: a test swaps a folder on the way for a link then.
func writeAgentsMD(root, path, block string, checked func()) (changed bool, err error) {
	realRoot, real, err := resolveWithin(root, path)
	if err != nil {
		return false, fmt.Errorf("agents_md %s: %w", path, err)
	}
	if checked != nil {
		checked()
	}
	// real has no link on the way from realRoot: the tree follows none
	// from here on.
	rel, err := filepath.Rel(realRoot, real)
	if err != nil {
		return false, fmt.Errorf("agents_md %s: %w", path, err)
	}
	tree, err := platform.OpenTree(realRoot)
	if err != nil {
		return false, fmt.Errorf("agents_md %s: %w", path, err)
	}
	defer tree.Close()
	perm := fs.FileMode(0o644)
	old, info, err := atomicfile.ReadBoundedIn(tree, rel, maxAgentsMD)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		old = nil
		err = mkdirAllIn(tree, filepath.Dir(rel))
	case err == nil:
		perm = info.Mode().Perm()
	}
	if err != nil {
		return false, agentsMDError(path, err)
	}
	next, err := SpliceAgentsMD(old, block)
	if err != nil {
		return false, fmt.Errorf("agents_md %s: %w", path, err)
	}
	if old != nil && bytes.Equal(old, next) {
		return false, nil
	}
	if err := atomicfile.WriteFileIn(tree, rel, next, perm); err != nil {
		return false, agentsMDError(path, err)
	}
	return true, nil
}

// agentsMDError is err, met reading or writing the agents_md file path,
// named: a link met on the way, put there since the check, wraps
// ErrOutsideWorkspace, so that a sync leaves that file alone.
func agentsMDError(path string, err error) error {
	if errors.Is(err, platform.ErrLinkOnPath) || errors.Is(err, platform.ErrLink) || errors.Is(err, atomicfile.ErrSymlink) {
		return fmt.Errorf("agents_md %s: %w: a symbolic link was put on its way since skillsync checked it (%w); nothing was written, and the next sync looks again", path, ErrOutsideWorkspace, err)
	}
	return fmt.Errorf("agents_md %s: %w", path, err)
}

// mkdirAllIn makes the folder rel below tree and each one on the way,
// following no link ("." is the tree itself).
func mkdirAllIn(tree *platform.Tree, rel string) error {
	if rel == "." {
		return nil
	}
	at := ""
	for _, name := range strings.Split(rel, string(filepath.Separator)) {
		at = filepath.Join(at, name)
		if err := tree.Mkdir(at, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return nil
}

// CheckAgentsMD returns the error WriteAgentsMD would return for path
// below root for a link that leads out of root (ErrOutsideWorkspace),
// before anything is written, with what to do: a sync leaves that file as
// it is.
func CheckAgentsMD(root, path string) error {
	if _, _, err := resolveWithin(root, path); err != nil {
		return fmt.Errorf("agents_md %s: %w; skillsync writes it only within the workspace %s, so it leaves it as it is: make it a file of the workspace (no link out of it), or take the entry out of the config", path, err, root)
	}
	return nil
}

// resolveWithin returns path with every symbolic link on the way (path
// itself included) resolved, when the result stays within root; a path
// that does not exist yet resolves through its longest existing parent.
// realRoot is root so resolved.
func resolveWithin(root, path string) (realRoot, real string, err error) {
	realRoot, err = filepath.EvalSymlinks(root)
	if err != nil {
		return "", "", err
	}
	existing, rest := filepath.Clean(path), ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			return "", "", fmt.Errorf("no part of it exists")
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	real, err = filepath.EvalSymlinks(existing)
	if err != nil {
		return "", "", err
	}
	real = filepath.Join(real, rest)
	if real != realRoot && !strings.HasPrefix(real, realRoot+string(filepath.Separator)) {
		return "", "", fmt.Errorf("%w: it resolves to %s", ErrOutsideWorkspace, real)
	}
	if real == realRoot {
		return "", "", errors.New("is the workspace itself")
	}
	// A link a clone brought (AGENTS.md -> .git/config) must not have a
	// sync splice its block into the repository's own files, nor into
	// the cache: git and skillsync keep those, never a user.
	rel, err := filepath.Rel(realRoot, real)
	if err != nil {
		return "", "", err
	}
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if skill.GitName(part) || strings.EqualFold(part, workspace.CacheName) {
			return "", "", fmt.Errorf("%w: it resolves to %s, in %s", ErrOutsideWorkspace, real, part)
		}
	}
	return realRoot, real, nil
}
