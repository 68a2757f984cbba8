package gittest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"io"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/skillsync/skillsync/internal/skilltest"
)

// Silent is a TCP server on 127.0.0.1 that accepts connections and never
// sends a byte, as a host that hangs before its SSH banner or its HTTP
// answer does.
type Silent struct {
	Addr string
	// Accepted counts the connections accepted; Closed those the client
	// has since closed.
	Accepted, Closed atomic.Int64
}

// StartSilent starts a Silent server that lives until the test ends.
func StartSilent(t testing.TB) *Silent {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Silent{Addr: ln.Addr().String()}
	var (
		mu      sync.Mutex
		conns   []net.Conn
		stopped bool
		wg      sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.Accepted.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				io.Copy(io.Discard, c) // until the client closes
				mu.Lock()
				defer mu.Unlock()
				if !stopped {
					s.Closed.Add(1)
				}
			}()
		}
	}()
	t.Cleanup(func() {
		mu.Lock()
		stopped = true
		ln.Close()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return s
}

// WaitClosed waits until the client has closed every connection it made,
// and reports whether it did before the deadline, which is generous: a
// client that never closes is what it detects.
func (s *Silent) WaitClosed(deadline time.Duration) bool {
	for end := time.Now().Add(deadline); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if n := s.Accepted.Load(); n > 0 && s.Closed.Load() == n {
			return true
		}
	}
	return false
}

// ClientKey writes a new SSH private key and an empty known_hosts file
// for a client, and returns their paths.
func ClientKey(t testing.TB) (keyFile, knownHosts string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	keyFile, knownHosts = filepath.Join(dir, "id_ed25519"), filepath.Join(dir, "known_hosts")
	skilltest.WriteFileMode(t, keyFile, string(pem.EncodeToMemory(block)), 0o600)
	skilltest.WriteFile(t, knownHosts, "")
	return keyFile, knownHosts
}
