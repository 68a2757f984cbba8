package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/internal/platform"
)

// isTerminal reports whether w is a terminal, where progress and colour
// make sense; a pipe or a file gets neither.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	return platform.IsTerminal(f)
}

// progressLine shows git's progress messages for several sources on one
// terminal line, each message prefixed by its source, rewriting the line
// in place.
type progressLine struct {
	mu  sync.Mutex
	out io.Writer
}

// progress returns a progress line on stderr when it is a terminal and
// neither --quiet nor --json is given, else nil, which shows nothing.
func (a *app) progress() *progressLine {
	if a.quiet || a.json || !isTerminal(a.stderr) {
		return nil
	}
	return &progressLine{out: a.stderr}
}

// option returns the engine option that sends fetch progress to p.
func (p *progressLine) option() []skillsync.Option {
	if p == nil {
		return nil
	}
	return []skillsync.Option{skillsync.WithProgress(p.writer)}
}

// writer returns the progress writer for one source.
func (p *progressLine) writer(source string) io.Writer {
	return &sourceProgress{line: p, source: source}
}

// clear erases the progress line, before results are printed.
func (p *progressLine) clear() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprint(p.out, "\r\x1b[K")
}

type sourceProgress struct {
	line   *progressLine
	source string
	buf    []byte
}

// maxProgressMessage bounds what is kept of a progress message whose \r
// or \n has not come: a server that never sends one grew the buffer
// without limit. The newest bytes are kept.
const maxProgressMessage = 4 << 10

// Write takes git's sideband stream, whose messages end in \r or \n, and
// shows each complete one.
func (s *sourceProgress) Write(b []byte) (int, error) {
	s.buf = append(s.buf, b...)
	for {
		i := bytes.IndexAny(s.buf, "\r\n")
		if i < 0 {
			if len(s.buf) > maxProgressMessage {
				s.buf = append(s.buf[:0], s.buf[len(s.buf)-maxProgressMessage:]...)
			}
			return len(b), nil
		}
		msg := bytes.TrimSpace(s.buf[:i])
		s.buf = s.buf[i+1:]
		if len(msg) == 0 {
			continue
		}
		s.line.mu.Lock()
		// The message comes from the remote: escaped, it cannot move the
		// cursor, clear the screen or retitle the window.
		fmt.Fprintf(s.line.out, "\r\x1b[K%s: %s", s.source, safe(string(msg)))
		s.line.mu.Unlock()
	}
}
