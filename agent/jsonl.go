package agent

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/skillsync/skillsync/internal/platform"
)

// MaxLine is the longest record line ReadNew hands on by default. Agents
// write tool results (whole files, images) into their transcripts; a line
// longer than the limit is skipped and counted, never held in memory.
const MaxLine = 4 << 20

// MaxFile is the largest record file ReadNew reads by default. Every read
// of a file hashes what was read of it before, so a larger one would cost
// its whole size at every import; it is not read at all.
const MaxFile = 1 << 30

// Limits bound what ReadNew reads of one file.
type Limits struct {
	// Line is the longest line handed on; longer ones are skipped.
	Line int
	// File is the largest file read; a larger one is refused with
	// ErrTooLarge.
	File int64
}

// DefaultLimits returns MaxLine and MaxFile.
func DefaultLimits() Limits { return Limits{Line: MaxLine, File: MaxFile} }

// ErrTooLarge is wrapped by the error of ReadNew for a file over its
// limit.
var ErrTooLarge = errors.New("record too large")

// Read is what ReadNew did with one file.
type Read struct {
	// Mark is where the next read starts.
	Mark Mark
	// New is set when the file had anything to read.
	New bool
	// Rewritten is set when the file no longer starts with what was read
	// last time, and was read again from the start.
	Rewritten bool
	// TooLong counts lines over the limit, skipped.
	TooLong int
}

// ReadNew reads the complete lines of the JSONL file at path that come
// after prev, handing each (without its newline) to fn with its byte
// offset, and returns the new mark. A file whose size and modification
// time are those of prev is not read at all. A file that changed is
// checked to still begin with the bytes prev consumed (by their hash); one
// that does not, or that shrank below them, is read from the start. A
// last line without its newline is left for the next read, as the agent
// may be writing it. Lines longer than lim.Line bytes are skipped; a
// file larger than lim.File is not read (ErrTooLarge). The file is opened
// without following a symbolic link and read only up to the size it had
// when opened. The read stops when ctx ends, within a line too. An error
// from fn stops the read, and the returned mark is then prev.
func ReadNew(ctx context.Context, path string, prev Mark, lim Limits, fn func(line []byte, offset int64) error) (Read, error) {
	fail := func(err error) (Read, error) { return Read{Mark: prev}, err }
	f, info, err := openRecord(path)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	size, mtime := info.Size(), info.ModTime().UTC()
	if prev.Hash != "" && size == prev.Size && mtime.Equal(prev.ModTime) {
		return Read{Mark: prev}, nil
	}
	if size > lim.File {
		return fail(fmt.Errorf("%w: %s is %d MiB, over the limit of %d MiB", ErrTooLarge, path, size>>20, lim.File>>20))
	}
	src := ctxReader{ctx: ctx, r: f}
	h := sha256.New()
	var out Read
	start := int64(0)
	if prev.Hash != "" && prev.Offset > 0 && prev.Offset <= size {
		if _, err := io.CopyN(h, src, prev.Offset); err != nil {
			return fail(fmt.Errorf("read %s: %w", path, err))
		}
		if hex.EncodeToString(h.Sum(nil)) == prev.Hash {
			start = prev.Offset
		}
	}
	if start == 0 {
		out.Rewritten = prev.Hash != "" && prev.Offset > 0
		h.Reset()
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fail(fmt.Errorf("read %s: %w", path, err))
		}
	}
	out.New = size > start
	offset, err := readLines(ctx, path, io.LimitReader(src, size-start), h, start, prev, lim, fn, &out)
	if err != nil {
		return fail(err)
	}
	out.Mark = Mark{Offset: offset, Size: size, ModTime: mtime, Hash: hex.EncodeToString(h.Sum(nil))}
	return out, nil
}

// openRecord opens the record file at path without following a symbolic
// link, and refuses anything but a regular file.
func openRecord(path string) (*os.File, os.FileInfo, error) {
	f, err := platform.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s is not a regular file", path)
	}
	return f, info, nil
}

// readLines hands fn the complete lines of src, the bytes of the record
// at path from offset start on, feeding them to h, which holds the hash
// of the bytes before start, and counts in out the lines over lim.Line.
// It returns the offset after the last complete line. ReadNew and
// ReadNewZstd differ only in where the bytes come from.
func readLines(ctx context.Context, path string, src io.Reader, h hash.Hash, start int64, prev Mark, lim Limits, fn func([]byte, int64) error, out *Read) (int64, error) {
	lines := lineReader{r: bufio.NewReaderSize(src, 64<<10), h: h, max: lim.Line}
	offset := start
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		line, n, long, err := lines.next()
		if errors.Is(err, io.EOF) {
			return offset, nil
		}
		if err != nil {
			return 0, fmt.Errorf("read %s: %w", path, err)
		}
		if long {
			out.TooLong++
		} else if err := handTorn(line, offset, prev, out.Rewritten, fn); err != nil {
			return 0, err
		}
		offset += n
	}
}

// handTorn hands line, read at offset, to fn: as two lines where it is
// the last line the read before left unfinished (it ran past prev.Size)
// and, joined to what came after, no longer parses, while what came
// after does. The agent's write was cut short there (the agent killed)
// and its next write began on the same line; whole, the line would lose
// the event the next write recorded.
func handTorn(line []byte, offset int64, prev Mark, rewritten bool, fn func([]byte, int64) error) error {
	cut := prev.Size - offset
	if rewritten || prev.Hash == "" || cut <= 0 || cut >= int64(len(line)) || json.Valid(line) || !json.Valid(line[cut:]) {
		return fn(line, offset)
	}
	if err := fn(line[:cut], offset); err != nil {
		return err
	}
	return fn(line[cut:], prev.Size)
}

// TornAt returns where, in a line that does not parse, a whole JSON
// object begins that runs to the line's end, -1 when none does: an agent
// killed in a write leaves a line unfinished, and its next write goes on
// on the same line. handTorn splits such a line where an import read up
// to; this finds the split when no import ran in between. At most
// maxTornStarts starts are tried, each `{"`, so a long line costs a few
// passes at most.
func TornAt(line []byte) int {
	from := 1
	for range maxTornStarts {
		if from >= len(line) {
			return -1
		}
		i := bytes.Index(line[from:], []byte(`{"`))
		if i < 0 {
			return -1
		}
		from += i
		if json.Valid(line[from:]) {
			return from
		}
		from++
	}
	return -1
}

// maxTornStarts bounds the starts TornAt tries.
const maxTornStarts = 64

// ctxReader reads from r until ctx ends, then fails with ctx's error. A
// line may be gigabytes long: reads end with ctx, not only lines.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// lineReader splits a stream into lines of at most max bytes, feeding
// every byte of every complete line to h, so h always holds the hash of
// what was consumed. Bytes of an unterminated last line are not fed.
type lineReader struct {
	r   *bufio.Reader
	h   hash.Hash
	max int
	buf []byte
}

// next returns the next complete line without its newline and the number
// of bytes it took, newline included. A line over max is returned as long,
// without its content. io.EOF means no complete line is left.
func (l *lineReader) next() (line []byte, n int64, long bool, err error) {
	l.buf = l.buf[:0]
	var saved []byte // the hash's state before a long line was fed to it
	for {
		chunk, err := l.r.ReadSlice('\n')
		n += int64(len(chunk))
		if !long && len(l.buf)+len(chunk) > l.max+1 {
			// Too long to keep: from here its bytes go straight to the
			// hash, which can be put back should the line never end.
			long = true
			if m, ok := l.h.(encoding.BinaryMarshaler); ok {
				saved, _ = m.MarshalBinary()
			}
			l.h.Write(l.buf)
			l.buf = l.buf[:0]
		}
		if long {
			l.h.Write(chunk)
		} else {
			l.buf = append(l.buf, chunk...)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if long && saved != nil {
				if u, ok := l.h.(encoding.BinaryUnmarshaler); ok {
					if uerr := u.UnmarshalBinary(saved); uerr != nil {
						return nil, 0, false, uerr
					}
				}
			}
			return nil, 0, false, io.EOF
		case err != nil:
			return nil, 0, false, err
		}
		if long {
			return nil, n, true, nil
		}
		l.h.Write(l.buf)
		return l.buf[:len(l.buf)-1], n, false, nil
	}
}

// ReadFunc reads the new lines of a record file: ReadNew, or a stand-in
// that fails in tests.
type ReadFunc func(ctx context.Context, path string, prev Mark, lim Limits, fn func(line []byte, offset int64) error) (Read, error)

// ReadRecord reads with read the lines of the record file at path that
// follow its mark in done (under key), handing each to fn, and notes in b
// what was done: the new mark, the lines over the limit, whether the file
// had anything new and whether it was read again from its start. A file
// that cannot be read is said in b.Unreadable and keeps its mark, so it is
// tried again next time, and the import goes on: the error returned is
// only ctx's, once it ended. Of the events fn added from a file whose read
// then failed, only those with an id are kept.
func (b *Batch) ReadRecord(ctx context.Context, read ReadFunc, lim Limits, done Marks, key, path string, fn func(line []byte, offset int64) error) error {
	prev, known := done[key]
	start := len(b.Events)
	r, err := read(ctx, path, prev, lim, fn)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		b.Unreadable = append(b.Unreadable, err.Error())
		if known {
			b.Marks[key] = prev
		}
		// The mark stays, so the lines handed on before the error come
		// again next time: a call with an id counts once (the calls
		// seen), one without would count again, and waits for then.
		kept := b.Events[:start]
		for _, ev := range b.Events[start:] {
			if ev.ID != "" {
				kept = append(kept, ev)
			}
		}
		b.Events = kept
		return nil
	}
	b.Marks[key] = r.Mark
	for i := start; i < len(b.Events); i++ {
		if b.Events[i].Written.IsZero() {
			b.Events[i].Written = r.Mark.ModTime
		}
	}
	b.TooLong += r.TooLong
	if r.New {
		b.Files++
	}
	if r.Rewritten {
		b.Rewritten++
	}
	return nil
}

// ListJSONL lists the regular .jsonl files below root, relative to it and
// sorted, at most depth path elements below it (the file's own name
// included), and apart the links named .jsonl there, which it does not
// follow. Deeper folders, other links and folders that cannot be read are
// passed over; a missing root holds none.
func ListJSONL(root string, depth int) (files, links []string, err error) {
	return ListRecords(root, depth, func(name string) bool { return strings.HasSuffix(name, ".jsonl") })
}

// ListRecords is ListJSONL for the files whose names match says are
// records.
func ListRecords(root string, depth int, match func(name string) bool) (files, links []string, err error) {
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p != root {
				return nil // an unreadable corner is not the workspace's loss
			}
			if errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipAll
			}
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel != "." && strings.Count(rel, string(filepath.Separator))+2 > depth {
				return filepath.SkipDir
			}
			return nil
		}
		if !match(d.Name()) {
			return nil
		}
		switch {
		case d.Type().IsRegular():
			files = append(files, rel)
		case d.Type()&fs.ModeSymlink != 0:
			links = append(links, rel)
		}
		return nil
	})
	sort.Strings(files)
	sort.Strings(links)
	return files, links, err
}
