package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"load","version":"0"}}}`

// initialize opens a session the way a client that never comes back does:
// one initialize request, and nothing after it.
func initialize(t testing.TB, url string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(initializeBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	io.Copy(io.Discard, res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("initialize: %s", res.Status)
	}
	return res.Header.Get("Mcp-Session-Id")
}

// ping sends a request in session id and returns the HTTP status.
func ping(t testing.TB, url, id string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	io.Copy(io.Discard, res.Body)
	return res.StatusCode
}

func TestMCPHTTPSessionsAreBounded(t *testing.T) {
	t.Parallel()
	s := newServer(t, fixture(t), Options{MaxSessions: 8})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	var ids []string
	for range 20 {
		ids = append(ids, initialize(t, srv.URL))
	}
	if live := s.liveCount(); live > 8 {
		t.Errorf("%d sessions open, want at most 8", live)
	}
	// The first sessions, idle longest, were closed; the last ones serve.
	if code := ping(t, srv.URL, ids[0]); code != http.StatusNotFound {
		t.Errorf("the oldest session answered %d, want 404", code)
	}
	if code := ping(t, srv.URL, ids[19]); code != http.StatusOK {
		t.Errorf("the newest session answered %d, want 200", code)
	}
	// A session in use is kept over an idle one: ping the 13th, open one
	// more, and the 13th still serves while the 14th does not.
	ping(t, srv.URL, ids[12])
	initialize(t, srv.URL)
	if code := ping(t, srv.URL, ids[12]); code != http.StatusOK {
		t.Errorf("a session just used was closed: %d", code)
	}
	if code := ping(t, srv.URL, ids[13]); code != http.StatusNotFound {
		t.Errorf("the session idle longest still serves: %d", code)
	}
}

// TestMCPHTTPSessionsMemory opens many sessions that never come back and
// checks that what the server holds stays bounded. The load is
// 20,000 sessions: BenchmarkMCPHTTPSessions runs it.
func TestMCPHTTPSessionsMemory(t *testing.T) {
	t.Parallel()
	n := 600 // past DefaultMaxSessions, so sessions are closed
	heap := sessionLoad(t, n)
	t.Logf("%d initialize requests: heap in use %d MiB afterwards", n, heap>>20)
	if heap > 64<<20 {
		t.Errorf("heap in use %d MiB after %d sessions, want under 64 MiB", heap>>20, n)
	}
}

func BenchmarkMCPHTTPSessions(b *testing.B) {
	for range b.N {
		heap := sessionLoad(b, 20000)
		b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
	}
}

// sessionLoad sends n initialize requests, each a new session, and
// returns the heap in use after a collection.
func sessionLoad(t testing.TB, n int) uint64 {
	s := newServer(t, fixture(t), Options{})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	for range n {
		initialize(t, srv.URL)
	}
	if live := s.liveCount(); live > DefaultMaxSessions {
		t.Errorf("%d sessions open, want at most %d", live, DefaultMaxSessions)
	}
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

func (s *Server) liveCount() int {
	s.live.mu.Lock()
	defer s.live.mu.Unlock()
	return len(s.live.last)
}

// TestMCPStdioAnswersEverythingReadBeforeEOF sends requests and closes
// the input at once, as `printf ... | skillsync mcp` does, and expects an
// answer to every request.
func TestMCPStdioAnswersEverythingReadBeforeEOF(t *testing.T) {
	t.Parallel()
	s := newServer(t, fixture(t), Options{})
	var in bytes.Buffer
	in.WriteString(initializeBody + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	const calls = 12
	for i := range calls {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"load_skill","arguments":{"name":"pdf"}}}`+"\n", 100+i)
	}
	fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"skill://pdf/reference/big.md"}}`+"\n", 200)
	out := &bytes.Buffer{}
	err := s.Run(context.Background(), &sdk.IOTransport{Reader: io.NopCloser(&in), Writer: nopWriteCloser{out}})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[int]bool{}
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var msg struct {
			ID *int `json:"id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err == nil && msg.ID != nil {
			ids[*msg.ID] = true
		}
	}
	if len(ids) != calls+2 {
		t.Errorf("%d answers, want %d (initialize, %d calls, a read): %v", len(ids), calls+2, calls, ids)
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// TestMCPStdioTurnsAwayAnOverlongMessage: a message longer than the SDK
// reads ends no connection. It is answered with an error for its id,
// and the requests before and after it are answered as ever.
func TestMCPStdioTurnsAwayAnOverlongMessage(t *testing.T) {
	t.Parallel()
	s := newServer(t, fixture(t), Options{})
	var in bytes.Buffer
	in.WriteString(initializeBody + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search_skills","arguments":{"query":"%s"}}}`+"\n", strings.Repeat("x", MaxMessage))
	in.WriteString(`{"jsonrpc":"2.0","id":8,"method":"tools/list"}` + "\n")
	out := &bytes.Buffer{}
	if err := s.Run(context.Background(), Stdio(&in, out)); err != nil {
		t.Fatal(err)
	}
	answers := map[int]string{}
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var msg struct {
			ID    *int `json:"id"`
			Error *struct{ Message string }
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err == nil && msg.ID != nil {
			answers[*msg.ID] = "result"
			if msg.Error != nil {
				answers[*msg.ID] = msg.Error.Message
			}
		}
	}
	if len(answers) != 3 || !strings.Contains(answers[7], "over the 16777215 a message may be") || answers[8] != "result" {
		t.Errorf("answers %v: want initialize's, an error for 7 and tools/list's", answers)
	}
}

// TestMCPStdioAnswersAMalformedMessage: a line that is not a JSON-RPC
// message (not JSON, two values, the wrong version, an id that is an
// object, an empty batch, null) ends no connection, as JSON-RPC 2.0
// asks: it is answered with -32700 (not JSON) or -32600 (not a request),
// and the requests before and after it are answered as ever. A message
// written over several lines is still read, and a message on one line
// ends a value left open before it ("{bad json").
func TestMCPStdioAnswersAMalformedMessage(t *testing.T) {
	t.Parallel()
	bad := map[string]int64{
		`{bad json`: jsonrpc.CodeParseError,
		`{"jsonrpc":"2.0","id":2,"method":"ping"} {"a":1}`:      jsonrpc.CodeParseError,
		strings.Repeat("[", 20000) + strings.Repeat("]", 20000): jsonrpc.CodeParseError,
		`{}`:   jsonrpc.CodeInvalidRequest,
		`42`:   jsonrpc.CodeInvalidRequest,
		`[]`:   jsonrpc.CodeInvalidRequest,
		`null`: jsonrpc.CodeInvalidRequest,
		`{"jsonrpc":"1.0","id":3,"method":"ping"}`:                                            jsonrpc.CodeInvalidRequest,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`:                                      jsonrpc.CodeInvalidRequest,
		`[{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","id":4,"method":"ping"}]`: jsonrpc.CodeInvalidRequest,
		// The SDK reads a message nested at most 1,000 deep.
		`{"jsonrpc":"2.0","id":5,"method":"ping","params":{"a":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + `}}`:   jsonrpc.CodeInvalidRequest,
		`[{"jsonrpc":"2.0","id":6,"method":"ping","params":{"a":` + strings.Repeat("[", 998) + strings.Repeat("]", 998) + `}}]`: jsonrpc.CodeInvalidRequest,
	}
	for line, code := range bad {
		t.Run(line[:min(len(line), 20)], func(t *testing.T) {
			t.Parallel()
			s := newServer(t, fixture(t), Options{})
			var in bytes.Buffer
			in.WriteString(initializeBody + "\n")
			in.WriteString(line + "\n")
			in.WriteString(`{"jsonrpc":"2.0","id":9,"method":"ping"}` + "\n")
			in.WriteString("{\"jsonrpc\": \"2.0\",\n \"id\": 8,\n \"method\": \"tools/list\"}\n")
			out := &bytes.Buffer{}
			if err := s.Run(context.Background(), Stdio(&in, out)); err != nil {
				t.Fatalf("the connection ended: %v", err)
			}
			var codes []int64
			answers := map[int]bool{}
			sc := bufio.NewScanner(out)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				var msg struct {
					ID    json.RawMessage `json:"id"`
					Error *struct{ Code int64 }
				}
				if err := json.Unmarshal(sc.Bytes(), &msg); err != nil {
					continue
				}
				if msg.Error != nil {
					codes = append(codes, msg.Error.Code)
					continue
				}
				id, _ := strconv.Atoi(string(msg.ID))
				answers[id] = true
			}
			if !answers[1] || !answers[8] || !answers[9] || len(codes) != 1 || codes[0] != code {
				t.Errorf("answers %v, errors %v: want initialize's, tools/list's, ping's and error %d", answers, codes, code)
			}
		})
	}
}

// TestMCPStdioAnswersEverythingReadBeforeAReadError: input that breaks
// off with an error rather than an end (a pipe torn down, a message the
// SDK cannot read) ends the connection only once every request read
// before it was answered, as the end of input does.
func TestMCPStdioAnswersEverythingReadBeforeAReadError(t *testing.T) {
	t.Parallel()
	s := newServer(t, fixture(t), Options{})
	var in bytes.Buffer
	in.WriteString(initializeBody + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	const calls = 12
	for i := range calls {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"load_skill","arguments":{"name":"pdf"}}}`+"\n", 100+i)
	}
	out := &bytes.Buffer{}
	broken := errors.New("the pipe broke")
	err := s.Run(context.Background(), &sdk.IOTransport{Reader: io.NopCloser(io.MultiReader(&in, errReader{broken})), Writer: nopWriteCloser{out}})
	if !errors.Is(err, broken) {
		t.Errorf("Run: %v, want the read's error", err)
	}
	ids := map[int]bool{}
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var msg struct {
			ID *int `json:"id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err == nil && msg.ID != nil {
			ids[*msg.ID] = true
		}
	}
	if len(ids) != calls+1 {
		t.Errorf("%d answers, want %d (initialize and %d calls): %v", len(ids), calls+1, calls, ids)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// TestMCPStdioReadsABatchOverSeveralLines: a batch written over several
// lines is read whole, even where its last message stands on a line of
// its own, a message there too: only a value left open that is no JSON
// ("{bad json") ends where such a line starts.
func TestMCPStdioReadsABatchOverSeveralLines(t *testing.T) {
	t.Parallel()
	s := newServer(t, fixture(t), Options{})
	var in bytes.Buffer
	in.WriteString(initializeBody + "\n")
	in.WriteString("[\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"},` + "\n" + `{"jsonrpc":"2.0","id":3,"method":"ping"}` + "\n]\n")
	out := &bytes.Buffer{}
	if err := s.Run(context.Background(), Stdio(&in, out)); err != nil {
		t.Fatalf("the connection ended: %v", err)
	}
	var batch []struct {
		ID    int `json:"id"`
		Error any `json:"error"`
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if bytes.HasPrefix(sc.Bytes(), []byte("[")) {
			if err := json.Unmarshal(sc.Bytes(), &batch); err != nil {
				t.Fatal(err)
			}
		} else if bytes.Contains(sc.Bytes(), []byte(`"error"`)) {
			t.Errorf("an error was answered: %s", sc.Bytes())
		}
	}
	if len(batch) != 2 || batch[0].ID+batch[1].ID != 5 || batch[0].Error != nil || batch[1].Error != nil {
		t.Errorf("the batch's answer: %+v, want both pings answered in one batch", batch)
	}
}
