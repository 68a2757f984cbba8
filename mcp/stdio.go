package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
// none), while the connection goes on. So is a message the SDK would
// fail to read, which would end the connection with every request read
// before it unanswered: one that is not JSON (-32700), or not a JSON-RPC
// message (-32600).
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

// next returns the next message within max, with its newline; a longer
// one is read to its end, answered and left out, and so is one the SDK
// could not read. A message is a line, or the lines of one JSON value
// that a client wrote over several (the SDK reads those); a line that is
// a message of its own ends a value left open before it.
func (g *lineGuard) next() ([]byte, error) {
	var msg []byte
	var open nesting
	start := 0 // where the line being read starts in msg
	for {
		chunk, err := g.in.ReadSlice('\n')
		if len(msg)+len(chunk) > g.max+1 {
			return nil, g.refuse(append(msg, chunk...), err)
		}
		msg = append(msg, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		line := msg[start:]
		if start > 0 && open.bad && len(bytes.TrimSpace(line)) > 0 {
			if _, ok := wellFormed(line); ok {
				// What was left open was not a message; a batch's
				// last message, on a line of its own, ends none.
				if werr := g.answer(msg[:start], jsonrpc.CodeParseError, nil); werr != nil {
					return nil, werr
				}
				return line, err
			}
		}
		if open.scan(line) && err == nil {
			start = len(msg) // a value written over several lines: read on
			continue
		}
		if code, ok := wellFormed(msg); !ok {
			return nil, g.answer(msg, code, err)
		}
		return msg, err
	}
}

// nesting follows the brackets of JSON text outside its strings, a line
// at a time, to tell where a value written over several lines ends.
type nesting struct {
	depth, deepest   int
	inString, escape bool
	// bad is set by a byte JSON never has outside its strings (the b of
	// "{bad json"): what is open then is no message still to end.
	bad bool
}

// scan reads line and reports whether a value is still open after it. A
// string is never open at a line's end: JSON's strings hold no newline.
func (n *nesting) scan(line []byte) bool {
	for _, b := range line {
		switch {
		case n.inString && n.escape:
			n.escape = false
		case n.inString && b == '\\':
			n.escape = true
		case n.inString:
			n.inString = b != '"'
		case b == '"':
			n.inString = true
		case b == '{' || b == '[':
			n.depth++
			n.deepest = max(n.deepest, n.depth)
		case b == '}' || b == ']':
			n.depth--
			n.bad = n.bad || n.depth < 0
		case !strings.ContainsRune(jsonOutside, rune(b)):
			n.bad = true
		}
	}
	return n.depth > 0 && !n.inString
}

// jsonOutside are the bytes JSON may have outside its strings but the
// brackets and quotes: white space, separators, numbers' and the letters
// of true, false and null.
const jsonOutside = " \t\r\n,:-+.0123456789eEtrufalsn"

// wellFormed reports whether the SDK can read msg: white space, or one
// JSON-RPC message or a batch of them. If not, code is the JSON-RPC
// error that answers it.
func wellFormed(msg []byte) (code int64, ok bool) {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 {
		return 0, true // the SDK reads past white space
	}
	if !json.Valid(msg) {
		// Not JSON, two values on one line, or nested past the
		// decoder's depth: the SDK's reading would stop.
		return jsonrpc.CodeParseError, false
	}
	if msg[0] != '[' && string(msg) != "null" {
		_, err := jsonrpc.DecodeMessage(msg)
		return jsonrpc.CodeInvalidRequest, err == nil
	}
	// A batch, as the SDK reads one ("null" is an empty one): nested at
	// most as deep as its decoder takes, not empty, each a message, no
	// id twice.
	var n nesting
	n.scan(msg)
	var batch []json.RawMessage
	if err := json.Unmarshal(msg, &batch); err != nil || len(batch) == 0 || n.deepest > maxDepth {
		return jsonrpc.CodeInvalidRequest, false
	}
	ids := map[string]bool{}
	for _, raw := range batch {
		m, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return jsonrpc.CodeInvalidRequest, false
		}
		if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
			id := fmt.Sprintf("%T %v", req.ID.Raw(), req.ID.Raw())
			if ids[id] {
				return jsonrpc.CodeInvalidRequest, false
			}
			ids[id] = true
		}
	}
	return 0, true
}

// maxDepth is how deeply the SDK's decoder lets JSON nest.
const maxDepth = 1000

// answer answers a message the SDK could not read with code, for the id
// it carries when it is a JSON-RPC object with one. err is the read's.
func (g *lineGuard) answer(msg []byte, code int64, err error) error {
	id := json.RawMessage("null")
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if code != jsonrpc.CodeParseError && json.Unmarshal(msg, &m) == nil && len(m.ID) > 0 && (m.ID[0] == '"' || m.ID[0] == '-' || m.ID[0] >= '0' && m.ID[0] <= '9') {
		id = m.ID
	}
	what := "is not JSON"
	if code != jsonrpc.CodeParseError {
		what = "is not a JSON-RPC 2.0 request, notification or response"
	}
	if werr := g.write(id, code, "the message "+what+"; it was not read"); werr != nil {
		return werr
	}
	return err
}

// write writes a JSON-RPC error for id.
func (g *lineGuard) write(id json.RawMessage, code int64, message string) error {
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": message}})
	_, err := g.out.Write(append(msg, '\n'))
	return err
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
	if werr := g.write(id, jsonrpc.CodeInvalidRequest, fmt.Sprintf("the message is %d bytes, over the %d a message may be; it was not read", size, g.max)); werr != nil {
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
