package httpserver

import (
	"net/http"
	"time"
)

// BodyDeadline gives the body of each request to h d to arrive. It is
// for a server without a read timeout (one whose responses stream, as
// mcp --http's do): there, a client that sent its headers and then
// trickled its body held a connection, and so a slot of Limits.Conns,
// for good. net/http lifts the deadline itself once the body is read to
// its end (its read that watches for the client going away clears it),
// so a response that streams for longer is not cut off; a body that did
// not arrive keeps it, and the server's read of what is left of it once
// h returns is bounded too.
func BodyDeadline(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(d))
		}
		h.ServeHTTP(w, r)
	})
}
