package mcp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxMessage is the longest line a client may send over stdio, in bytes.
// The SDK ends the whole connection at a longer one, with every request
// read before it unanswered; Stdio turns such a line away on its own.
const MaxMessage = sdk.DefaultMaxLineLength - 1

// Stdio returns the transport of a server on in and out (stdin and
// stdout), which the MCP specification delimits with newlines: a line
// over MaxMessage is not handed to the SDK but skipped, and answered with
// a JSON-RPC error for the id it carries (null when its start shows
// none), while the connection goes on.
func Stdio(in io.Reader, out io.Writer) sdk.Transport {
	w := &lockedWriter{w: out}
	return &sdk.IOTransport{
		Reader:        io.NopCloser(&lineGuard{in: bufio.NewReaderSize(in, 64<<10), out: w, max: MaxMessage}),
		Writer:        w,
		MaxLineLength: sdk.DefaultMaxLineLength,
	}
}

// lockedWriter serialises writes: the SDK's answers and lineGuard's.
// Each write is one whole message.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

// lineGuard hands the lines of in to its reader, and answers a line over
// max itself instead.
type lineGuard struct {
	in   *bufio.Reader
	out  io.Writer
	max  int
	line []byte // what is left of the line being handed on
}

func (g *lineGuard) Read(p []byte) (int, error) {
	for len(g.line) == 0 {
		line, err := g.next()
		if len(line) == 0 && err != nil {
			return 0, err
		}
		g.line = line
	}
	n := copy(p, g.line)
	g.line = g.line[n:]
	return n, nil
}

// next returns the next line within max, with its newline; a longer line
// is read to its end, answered and left out.
func (g *lineGuard) next() ([]byte, error) {
	var line []byte
	for {
		chunk, err := g.in.ReadSlice('\n')
		if len(line)+len(chunk) > g.max+1 {
			return nil, g.refuse(append(line, chunk...), err)
		}
		line = append(line, chunk...)
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

// refuse skips the rest of an overlong line whose start is head, and
// answers it.
func (g *lineGuard) refuse(head []byte, err error) error {
	size := len(head)
	for err == bufio.ErrBufferFull {
		var chunk []byte
		chunk, err = g.in.ReadSlice('\n')
		size += len(chunk)
	}
	id := json.RawMessage("null")
	if m := idField().FindSubmatch(head[:min(len(head), 4096)]); m != nil && json.Valid(m[1]) {
		id = m[1]
	}
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{
		"code":    -32600,
		"message": fmt.Sprintf("the message is %d bytes, over the %d a message may be; it was not read", size, g.max),
	}})
	if _, werr := g.out.Write(append(msg, '\n')); werr != nil {
		return werr
	}
	return err // nil at the line's end, io.EOF when the input ended in it
}

// idField finds a JSON-RPC id, a number or a string, near the start of a
// message, where clients write it. Compiled at first use: a process that
// never meets an overlong line never pays for it.
var idField = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`"id"\s*:\s*(-?[0-9]+|"(?:[^"\\]|\\.)*")`)
})
