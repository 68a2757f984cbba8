package git

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestAppenderReadsIntoItsRoom: an appender reads the
// whole stream, whatever its length against the room made for it, in
// small reads or large, and passes a read error on.
func TestAppenderReadsIntoItsRoom(t *testing.T) {
	for _, tt := range []struct {
		data string
		room int
	}{
		{"", 0}, {"", 8}, {"exact", 5}, {"short", 10}, {"longer than its room", 4}, {strings.Repeat("x", 100_000), 100_000},
	} {
		for _, wrap := range []func(io.Reader) io.Reader{
			func(r io.Reader) io.Reader { return struct{ io.Reader }{r} }, // no WriteTo
			iotest.OneByteReader, iotest.HalfReader, iotest.DataErrReader,
		} {
			b := make([]byte, 0, tt.room)
			n, err := (*appender)(&b).ReadFrom(wrap(strings.NewReader(tt.data)))
			if err != nil || n != int64(len(tt.data)) || string(b) != tt.data {
				t.Errorf("%d bytes into room for %d: read %d, %v; holds %d bytes", len(tt.data), tt.room, n, err, len(b))
			}
			if len(tt.data) <= tt.room && cap(b) != tt.room {
				t.Errorf("%d bytes into room for %d: grown to %d", len(tt.data), tt.room, cap(b))
			}
		}
	}
	bad := errors.New("bad pack")
	b := make([]byte, 0, 16)
	if _, err := (*appender)(&b).ReadFrom(io.MultiReader(bytes.NewReader([]byte("abc")), iotest.ErrReader(bad))); !errors.Is(err, bad) {
		t.Errorf("a read error came back as %v", err)
	}
}
