package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

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
