package httpserver

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestBodyDeadline: on a server without a read timeout, a body that
// stops arriving is let go after the deadline; a body that arrived
// lifts it, so a response that streams for longer is not cut off.
func TestBodyDeadline(t *testing.T) {
	t.Parallel()
	const d = 200 * time.Millisecond
	canceled := make(chan bool, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "the body did not arrive", http.StatusRequestTimeout)
			return
		}
		rc := http.NewResponseController(w)
		io.WriteString(w, "a")
		rc.Flush()
		select {
		case <-r.Context().Done():
			canceled <- true
			return
		case <-time.After(3 * d):
		}
		io.WriteString(w, "b")
		canceled <- false
	})
	addr := serve(t, BodyDeadline(h, d), Limits{})

	t.Run("trickled", func(t *testing.T) {
		c := dial(t, addr)
		io.WriteString(c, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\nab")
		done := make(chan struct{})
		go func() {
			io.Copy(io.Discard, c) // an answer, then the close
			close(done)
		}()
		await(t, done, "the end of a connection whose body stopped")
	})

	t.Run("streamed", func(t *testing.T) {
		resp, err := http.Post("http://"+addr+"/", "text/plain", strings.NewReader("whole"))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(bufio.NewReader(resp.Body))
		if err != nil || string(body) != "ab" {
			t.Errorf("streamed response %q %v, want \"ab\"", body, err)
		}
		if <-canceled {
			t.Error("the request's context ended while its response streamed")
		}
	})
}
