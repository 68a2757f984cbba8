package agent

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
)

// maxWindow bounds the window a zstd frame may ask the decoder for, and
// so what it holds in memory: a record is an agent's file on the user's
// disk, but any program can write one there. Codex compresses at level 3,
// whose window is 2 MiB at most; 8 MiB leaves room up to level 19. A
// frame that asks for more is refused before anything is allocated.
const maxWindow = 8 << 20

// maxRatio bounds how many times its own size a compressed record may
// decompress to: 28 KiB of zstd can hold a GiB of newlines, each a line
// to hand on (a minute), and a folder of such files would keep an import
// busy for hours while taking no room. Each line of a Codex rollout has
// its own time and ids, a few dozen bytes zstd cannot take out, so even
// one repeating a long tool output comes nowhere near; a file past it is
// said, not read, and decompressed beside itself (zstd -d) it is read as
// a plain record. The zstd format's own bound is about 32768.
const maxRatio = 4096

// maxPadding bounds how far the compressed bytes read may run ahead of
// the bytes they decompress to, and maxPaddingShare, a share of the
// latter, how much further: zstd stores incompressible data with a
// few bytes a block, so a file of empty or skippable frames (a few bytes
// each, each costing the decoder a reset) is no compressed record, and
// would cost seconds a MiB with nothing to hand on.
const (
	maxPadding      = 1 << 20
	maxPaddingShare = 16
)

// errPadded is why a compressed file that is mostly frames with nothing in
// them is refused (maxPadding).
var errPadded = errors.New("mostly frames that hold nothing, not a compressed record")

// ErrCompressed is wrapped by the error for a compressed record that does
// not decompress: a corrupt frame, or one asking for a window over what
// the decoder allows.
var ErrCompressed = errors.New("compressed record does not decompress")

// Zstd decompresses record files with one decoder, reused from file to
// file: an importer reads the first line of every compressed record to
// learn whose it is, and a decoder's buffers cost more than that line. The
// decoder's memory is bounded (a frame window of at most maxWindow) and it
// decodes in the caller's goroutine, no blocks read ahead. A Zstd reads
// one file at a time; Close releases it.
type Zstd struct {
	d *zstd.Decoder
}

// NewZstd returns a Zstd.
func NewZstd() (*Zstd, error) {
	d, err := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(maxWindow),
		zstd.WithDecoderMaxMemory(maxWindow))
	if err != nil {
		return nil, fmt.Errorf("zstd decoder: %w", err)
	}
	return &Zstd{d: d}, nil
}

// Close releases the decoder.
func (z *Zstd) Close() { z.d.Close() }

// zstdCount counts the bytes of a compressed file read (in) and those
// they decompressed to (out).
type zstdCount struct{ in, out int64 }

// packedReader reads a compressed file for the decoder, counting, and
// fails once what it read runs past what that decompressed to by more
// than maxPadding allows.
type packedReader struct {
	r io.Reader
	c *zstdCount
}

func (p packedReader) Read(b []byte) (int, error) {
	if p.c.in > p.c.out+maxPadding+p.c.out/maxPaddingShare {
		return 0, errPadded
	}
	n, err := p.r.Read(b)
	p.c.in += int64(n)
	return n, err
}

// packedBuffer is the buffer a compressed file is read through: the
// decoder reads a frame's or a block's header a few bytes at a time, a
// system call each, unbuffered.
const packedBuffer = 64 << 10

// zstdReader reads what d decodes, its errors but io.EOF wrapping
// ErrCompressed and naming the file.
type zstdReader struct {
	d    *zstd.Decoder
	path string
	c    *zstdCount
}

func (z zstdReader) Read(p []byte) (int, error) {
	n, err := z.d.Read(p)
	z.c.out += int64(n)
	if err != nil && !errors.Is(err, io.EOF) {
		err = zstdErr(z.path, err, z.c)
	}
	return n, err
}

// zstdErr is the error of the decoder for the compressed file at path,
// wrapping ErrCompressed and naming the file.
func zstdErr(path string, err error, c *zstdCount) error {
	if errors.Is(err, errPadded) || c != nil && c.in > c.out+maxPadding+c.out/maxPaddingShare {
		return fmt.Errorf("%w: %s: %d bytes of it decompress to %d: %w", ErrCompressed, path, c.in, c.out, errPadded)
	}
	return fmt.Errorf("%w: %s: %w", ErrCompressed, path, err)
}

// zstdFile is a compressed record opened, read decompressed; closing it
// closes the file, not the decoder.
type zstdFile struct {
	zstdReader
	f *os.File
}

func (z zstdFile) Close() error { return z.f.Close() }

// Open opens the zstd-compressed record file at path as ReadNew does (no
// link followed, only a regular file), for reading its bytes
// decompressed from the start. Reading past what the caller needs is the
// caller's to bound. The reader is z's until it is closed.
func (z *Zstd) Open(path string) (io.ReadCloser, error) {
	f, _, err := openRecord(path)
	if err != nil {
		return nil, err
	}
	c := &zstdCount{}
	if err := z.d.Reset(packedReader{bufio.NewReaderSize(f, packedBuffer), c}); err != nil {
		f.Close()
		return nil, zstdErr(path, err, c)
	}
	return zstdFile{zstdReader{z.d, path, c}, f}, nil
}

// ReadNewZstd is Zstd.ReadNew with a decoder of its own.
func ReadNewZstd(ctx context.Context, path string, prev Mark, lim Limits, fn func(line []byte, offset int64) error) (Read, error) {
	z, err := NewZstd()
	if err != nil {
		return Read{Mark: prev}, fmt.Errorf("decompress %s: %w", path, err)
	}
	defer z.Close()
	return z.ReadNew(ctx, path, prev, lim, fn)
}

// ReadNew reads a record file compressed with zstd, as Codex compresses
// a rollout idle for a week, as the function ReadNew reads a plain one.
// Offsets, the hash and lim.File
// are of the decompressed bytes, so a mark made on the file before it was
// compressed goes on from where it was, and the mark made here goes on in
// the plain file decompressed from it. The mark keeps the compressed
// file's size (Mark.Packed) and modification time: an untouched one is
// not decompressed again.
//
// A plain file's size is known before its first line is handed on; a
// compressed one's only once it is decompressed. So the file is
// decompressed twice: first whole, to check that it decodes and fits in
// lim.File and that it begins with the bytes prev consumed, then for its
// lines. A corrupt file (ErrCompressed) or one over the limit
// (ErrTooLarge) hands no line to fn. A file is compressed once, so the
// second pass is paid once.
func (z *Zstd) ReadNew(ctx context.Context, path string, prev Mark, lim Limits, fn func(line []byte, offset int64) error) (Read, error) {
	fail := func(err error) (Read, error) { return Read{Mark: prev}, err }
	f, info, err := openRecord(path)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	packed, mtime := info.Size(), info.ModTime().UTC()
	if untouched(info, prev) {
		return Read{Mark: prev}, nil
	}
	if packed > lim.File {
		return fail(fmt.Errorf("%w: %s is %d MiB compressed, over the limit of %d MiB", ErrTooLarge, path, packed>>20, lim.File>>20))
	}
	// At most lim.File, and at most maxRatio times the file's size.
	limit, bomb := lim.File, false
	if packed <= lim.File/maxRatio {
		limit, bomb = packed*maxRatio, true
	}
	// stream decodes the file from its start; the open file is read
	// twice, so the second pass reads the bytes the first checked.
	stream := func() (io.Reader, error) {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		c := &zstdCount{}
		if err := z.d.Reset(packedReader{bufio.NewReaderSize(ctxReader{ctx: ctx, r: f}, packedBuffer), c}); err != nil {
			return nil, zstdErr(path, err, c)
		}
		// ctx is checked on the decoded side too: a small file may
		// decode to gigabytes.
		return ctxReader{ctx: ctx, r: zstdReader{z.d, path, c}}, nil
	}
	src, err := stream()
	if err != nil {
		return fail(err)
	}
	h := sha256.New()
	known := prev.Hash != "" && prev.Offset > 0
	bounded := io.LimitReader(src, limit+1)
	var size int64
	if known {
		size, err = io.CopyN(h, bounded, prev.Offset)
		if errors.Is(err, io.EOF) {
			err = nil // shorter than the mark: read from the start
		}
	}
	if err == nil {
		var n int64
		n, err = io.Copy(io.Discard, bounded)
		size += n
	}
	if err != nil {
		return fail(err)
	}
	switch {
	case size > limit && bomb:
		return fail(fmt.Errorf("%w: %s decompresses to over %d times its %d bytes, more than any agent's record compresses: not read; decompressed beside itself (zstd -d), it is read as a plain record", ErrTooLarge, path, maxRatio, packed))
	case size > limit:
		return fail(fmt.Errorf("%w: %s decompresses to over %d MiB, the limit", ErrTooLarge, path, lim.File>>20))
	}
	var out Read
	start := int64(0)
	if known && prev.Offset <= size && hex.EncodeToString(h.Sum(nil)) == prev.Hash {
		start = prev.Offset
	} else {
		out.Rewritten = known
		h.Reset()
	}
	if src, err = stream(); err != nil {
		return fail(err)
	}
	if _, err := io.CopyN(io.Discard, src, start); err != nil {
		return fail(fmt.Errorf("read %s: %w", path, err))
	}
	out.New = size > start
	offset, err := readLines(ctx, path, io.LimitReader(src, size-start), h, start, prev, lim, fn, &out)
	if err != nil {
		return fail(err)
	}
	out.Mark = Mark{Offset: offset, Size: size, ModTime: mtime, Hash: hex.EncodeToString(h.Sum(nil)), Packed: packed}
	return out, nil
}

// ZstdUntouched says whether the compressed record file at path has the
// size and modification time it had when Zstd.ReadNew made prev, without
// following a link. Then nothing of it is to be read: the caller need
// not decompress even its first line.
func ZstdUntouched(path string, prev Mark) bool {
	info, err := os.Lstat(path)
	return err == nil && info.Mode().IsRegular() && untouched(info, prev)
}

// untouched says whether the compressed file of info is the one prev was
// read from. A mark made on a plain file is not taken for one whatever
// the times (compressing may keep a file's time): its Packed is 0, the
// size of no zstd frame.
func untouched(info os.FileInfo, prev Mark) bool {
	return prev.Hash != "" && info.Size() == prev.Packed && info.ModTime().UTC().Equal(prev.ModTime)
}
