package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/skillsync/skillsync/internal/platform"
)

// ErrNotRegular is wrapped by ReadBounded's error for a path that holds a
// directory, a FIFO, a device or a socket.
var ErrNotRegular = errors.New("is not a regular file")

// ErrTooLarge is wrapped by ReadBounded's error for a file over its limit.
var ErrTooLarge = errors.New("is larger than skillsync reads")

// ReadBounded reads the regular file at path, at most max bytes, the way
// every file of a workspace is read: a symbolic link at path is not
// followed (ErrSymlink), a FIFO planted there does not block
// (ErrNotRegular), and a file over max is refused (ErrTooLarge). A missing
// file wraps fs.ErrNotExist. Every error names path.
func ReadBounded(path string, max int64) ([]byte, error) {
	f, err := platform.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, refusal(path, err)
	}
	defer f.Close()
	data, _, err := readOpened(f, path, max)
	return data, err
}

// readOpened is ReadBounded of f, opened from path; it gives f's stat
// too.
func readOpened(f *os.File, path string, max int64) ([]byte, fs.FileInfo, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	if !info.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s %w (%s)", path, ErrNotRegular, info.Mode().Type())
	}
	if info.Size() > max {
		return nil, nil, fmt.Errorf("%s %w: %d bytes, over %d", path, ErrTooLarge, info.Size(), max)
	}
	// Sized from the stat: a record read on every sync is read in one go.
	data, err := readInto(io.LimitReader(f, max+1), make([]byte, 0, info.Size()+1))
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > max {
		return nil, nil, fmt.Errorf("%s %w: it grew past %d bytes while read", path, ErrTooLarge, max)
	}
	return data, info, nil
}

// readInto is io.ReadAll into b's spare capacity.
func readInto(r io.Reader, b []byte) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}
