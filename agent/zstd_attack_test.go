package agent

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/skillsync/skillsync/internal/platform"
)

// rleFrame is one zstd frame (8 MiB window, no checksum) of blocks
// RLE blocks of 128 KiB of b each: 4 bytes of file a block, 32768 times
// that decompressed.
func rleFrame(b byte, blocks int) []byte {
	out := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 13 << 3} // RFC 8878: magic, no FCS, window 2^23
	for i := range blocks {
		h := (128<<10)<<3 | 1<<1 // RLE, 128 KiB
		if i == blocks-1 {
			h |= 1 // last
		}
		out = append(out, byte(h), byte(h>>8), byte(h>>16), b)
	}
	return out
}

// skippable is a skippable frame (RFC 8878 3.1.2) claiming size bytes,
// holding payload.
func skippable(size uint32, payload []byte) []byte {
	return append([]byte{0x50, 0x2a, 0x4d, 0x18, byte(size), byte(size >> 8), byte(size >> 16), byte(size >> 24)}, payload...)
}

// zattack is one hostile compressed record and what reading it must do.
type zattack struct {
	name string
	// make writes the record at path.
	make func(t *testing.T, path string)
	want string // the lines handed on, joined by commas
	err  error  // nil for none; the error must name the file
}

// TestZstdAttacks: compressed records as a hostile program would write
// them are read within a time budget and in bounded memory, or refused
// by name, handing on nothing: decompression bombs (a GiB of newlines,
// each a line to hand on, in 28 KiB, refused once it passes 4096 times the file's size; a GiB of bytes in 32 KiB), a file
// of empty or skippable frames (a system call each, unbuffered: a minute
// for 32 MiB, with nothing to hand on), a frame asking for a huge content size, a checksum that
// does not match, a frame cut short, a FIFO and a folder named .zst. Skippable
// frames around a rollout's and frames one after another are read as
// zstd reads them.
func TestZstdAttacks(t *testing.T) {
	t.Parallel()
	write := func(data []byte) func(t *testing.T, path string) {
		return func(t *testing.T, path string) { writeFile(t, path, data) }
	}
	empty := bytes.Repeat([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x00, 0x01, 0x00, 0x00}, 32<<20/9) // empty frames, as the encoder writes one
	skips := bytes.Repeat(skippable(0, nil), 32<<20/8)
	ab := compressed(t, "a\nb\n")
	checked := compressedCRC(t, "a\nb\n")
	badSum := append([]byte{}, checked...)
	badSum[len(badSum)-1] ^= 0xff
	hugeFCS := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 2<<3 | 1, 0, 0, 'a', '\n'}
	for _, c := range []zattack{
		{"a GiB of newlines in 28 KiB", write(rleFrame('\n', 7200)), "", ErrTooLarge},
		{"a GiB in 32 KiB", write(rleFrame('a', 8192)), "", ErrTooLarge},
		{"32 MiB of empty frames", write(empty), "", ErrCompressed},
		{"32 MiB of skippable frames", write(skips), "", ErrCompressed},
		{"empty frames before a rollout", write(append(append([]byte{}, empty[:9*1000]...), ab...)), "a,b", nil},
		{"skippable frames around a rollout", write(bytes.Join([][]byte{skippable(3, []byte("xyz")), ab, skippable(0, nil)}, nil)), "a,b", nil},
		{"a skippable frame claiming 4 GiB", write(append(append([]byte{}, ab...), skippable(0xffffffff, []byte("xyz"))...)), "", ErrCompressed},
		{"frames one after another", write(bytes.Join([][]byte{compressed(t, "a\n"), compressed(t, "b\n"), compressed(t, "c\n")}, nil)), "a,b,c", nil},
		{"a content size of 2^63", write(hugeFCS), "", ErrCompressed},
		{"a checksum that does not match", write(badSum), "", ErrCompressed},
		{"a checksum that matches", write(checked), "a,b", nil},
		{"cut short", write(checked[:len(checked)-5]), "", ErrCompressed},
		{"junk after the frame", write(append(append([]byte{}, ab...), "junk"...)), "", ErrCompressed},
		{"a FIFO", func(t *testing.T, path string) {
			if err := platform.Mkfifo(path); err != nil {
				t.Skip(err)
			}
		}, "", errNotRegular},
		{"a folder", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "", errNotRegular},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Not parallel: the memory measured is this read's.
			path := filepath.Join(t.TempDir(), "rollout.jsonl.zst")
			c.make(t, path)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			var got []string
			lines := 0
			_, err := ReadNewZstd(ctx, path, Mark{}, DefaultLimits(), func(line []byte, _ int64) error {
				if lines++; lines <= 100 {
					got = append(got, string(line))
				}
				return nil
			})
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			switch {
			case errors.Is(err, context.DeadlineExceeded):
				t.Fatalf("still reading after %v", took)
			case c.err == errNotRegular && (err == nil || !strings.Contains(err.Error(), "not a regular file")):
				t.Fatalf("error %v, want one saying it is not a regular file", err)
			case c.err != errNotRegular && (c.err == nil) != (err == nil), c.err != nil && c.err != errNotRegular && !errors.Is(err, c.err):
				t.Fatalf("error %v, want %v", err, c.err)
			case err != nil && !strings.Contains(err.Error(), path):
				t.Errorf("error %v does not name %s", err, path)
			}
			if w := strings.Join(got, ","); lines > 100 || w != c.want {
				t.Errorf("handed on %d lines %.100q, want %q", lines, w, c.want)
			}
			// The decoder's window and buffers, not the file's content.
			if grew := int64(after.HeapInuse) - int64(before.HeapInuse); grew > 128<<20 {
				t.Errorf("the heap grew by %d MiB", grew>>20)
			}
			t.Logf("%v", took)
		})
	}
}

// errNotRegular stands for the error of a file that is no regular file.
var errNotRegular = errors.New("not a regular file")

// compressedCRC is compressed with the frame's checksum.
func compressedCRC(t *testing.T, content string) []byte {
	t.Helper()
	e, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	return e.EncodeAll([]byte(content), nil)
}

// TestZstdFramesAppended: a compressed record that grows by a frame
// between reads (a .zst is written once by Codex, but zstd allows frames
// one after another, and a file may be replaced by a longer one) goes on
// from the mark: the lines of the frames read before are not handed on
// again, and a record replaced by a shorter one is read again from its
// start, said rewritten.
func TestZstdFramesAppended(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "rollout.jsonl.zst")
	var prev Mark
	for i, c := range []struct {
		data      []byte
		want      string
		rewritten bool
	}{
		{compressed(t, "a\n"), "a", false},
		{bytes.Join([][]byte{compressed(t, "a\n"), compressed(t, "b\nc")}, nil), "b", false},
		{bytes.Join([][]byte{compressed(t, "a\n"), compressed(t, "b\nc"), compressed(t, "\nd\n")}, nil), "c,d", false},
		{compressed(t, "a\nb\ncd\n"), "a,b,cd", true}, // shorter than the mark: read again from the start
	} {
		writeFile(t, path, c.data)
		if err := os.Chtimes(path, time.Time{}, time.Date(2026, 3, 1, 0, 0, i, 0, time.UTC)); err != nil {
			t.Fatal(err)
		}
		var got []string
		r, err := ReadNewZstd(context.Background(), path, prev, DefaultLimits(), func(line []byte, _ int64) error {
			got = append(got, string(line))
			return nil
		})
		if err != nil || strings.Join(got, ",") != c.want || r.Rewritten != c.rewritten {
			t.Fatalf("read %d: %q, rewritten %v, %v; want %q, %v", i, got, r.Rewritten, err, c.want, c.rewritten)
		}
		prev = r.Mark
	}
}
