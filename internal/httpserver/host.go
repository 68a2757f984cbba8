package httpserver

import (
	"net"
	"net/http"
	"strings"
)

// LoopbackHost reports whether the Host header value hostport names the
// local machine: localhost or a loopback address, with or without a
// port.
func LoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ViaLoopback reports whether r reached the server on a loopback address
// (whatever address it listens on).
func ViaLoopback(r *http.Request) bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// GuardLoopback refuses, with 403, a request that reached a loopback
// address under another host's name: a page of another site whose name
// resolves to 127.0.0.1 (DNS rebinding) must not read what a server
// meant for this machine answers. A request that came in on another
// address (a pod's, where a cluster scrapes the daemon) is let through:
// the names it may come by cannot be known.
func GuardLoopback(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ViaLoopback(r) && !LoopbackHost(r.Host) {
			http.Error(w, "host "+r.Host+" is not served here", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
