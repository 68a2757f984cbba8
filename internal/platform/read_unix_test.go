//go:build unix

package platform

import (
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReadExactly holds the end check on its own: ReadRegular's size
// check comes first, so a file must grow between it and the read, which
// a test cannot time; here the descriptor's file simply has other sizes.
func TestReadExactly(t *testing.T) {
	cases := []struct {
		name       string
		size, want int // the file's bytes, buf's length
		room       int
		ok         bool
	}{
		{"exact", 10, 10, 5, true},
		{"exact, no room", 10, 10, 0, true},
		{"empty", 0, 0, 5, true},
		{"empty, no room", 0, 0, 0, true},
		{"one byte more", 11, 10, 5, false},
		{"one byte more, no room", 11, 10, 0, false},
		{"one byte more than empty", 1, 0, 0, false},
		{"one byte less", 9, 10, 5, false},
		{"one byte less, no room", 9, 10, 0, false},
		{"far more", 1 << 20, 10, 5, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "f")
			content := make([]byte, tc.size)
			for i := range content {
				content[i] = byte('a' + i%26)
			}
			write(t, p, string(content))
			fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			buf := make([]byte, tc.want, tc.want+tc.room)
			if ok := readExactly(fd, buf); ok != tc.ok {
				t.Fatalf("readExactly = %v, want %v", ok, tc.ok)
			}
			if tc.ok && string(buf) != string(content) {
				t.Errorf("read %q, want %q", buf, content)
			}
		})
	}
}
