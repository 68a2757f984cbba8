package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestProgressLineShowsEachMessageOnOneLine(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	p := &progressLine{out: &out}
	team, vendor := p.writer("team"), p.writer("vendor")
	// git's sideband arrives in arbitrary chunks, messages ended by \r or \n.
	for _, chunk := range []struct {
		w    interface{ Write([]byte) (int, error) }
		data string
	}{
		{team, "Counting obj"}, {team, "ects:  50% (1/2)\r"}, {vendor, "Enumerating objects: 3, done.\n"},
		{team, "Counting objects: 100% (2/2), done.\n\r"},
	} {
		if _, err := chunk.w.Write([]byte(chunk.data)); err != nil {
			t.Fatal(err)
		}
	}
	p.clear()
	want := "\r\x1b[Kteam: Counting objects:  50% (1/2)" +
		"\r\x1b[Kvendor: Enumerating objects: 3, done." +
		"\r\x1b[Kteam: Counting objects: 100% (2/2), done." +
		"\r\x1b[K"
	if out.String() != want {
		t.Errorf("progress =\n%q\nwant\n%q", out.String(), want)
	}
}

func TestPipesAreNotTerminals(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if isTerminal(w) || isTerminal(&bytes.Buffer{}) {
		t.Error("a pipe or a buffer was taken for a terminal: progress would garble it")
	}
}

// TestProgressFromTheRemoteIsEscaped: a server's progress message cannot
// retitle the window or clear the screen.
func TestProgressFromTheRemoteIsEscaped(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	p := &progressLine{out: &out}
	if _, err := p.writer("evil").Write([]byte("\x1b]0;PWNED\x07\x1b[2Jcounting\n")); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if strings.Contains(got[len("\r\x1b[K"):], "\x1b") || strings.Contains(got, "\x07") || !strings.Contains(got, "counting") {
		t.Errorf("progress printed control characters raw: %q", got)
	}
}

// A server that never ends its progress message cannot grow the buffer
// without limit: the newest bytes of the message are kept, and shown
// when it ends.
func TestProgressMessageIsBounded(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	p := &progressLine{out: &out}
	w := p.writer("team").(*sourceProgress)
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for range 256 { // 16 MiB without \r or \n
		if _, err := w.Write(chunk); err != nil {
			t.Fatal(err)
		}
		if cap(w.buf) > 2*len(chunk)+maxProgressMessage {
			t.Fatalf("the buffer holds %d bytes", cap(w.buf))
		}
	}
	if _, err := w.Write([]byte("end\n")); err != nil {
		t.Fatal(err)
	}
	if want := "\r\x1b[Kteam: " + strings.Repeat("x", maxProgressMessage) + "end"; out.String() != want {
		t.Errorf("progress = %d bytes, want its last %d and \"end\"", out.Len(), maxProgressMessage)
	}
}
