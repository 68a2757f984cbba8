//go:build !unix

package platform

import (
	"io"
	"io/fs"
	"os"
	"time"
)

// ReadRegular reads the regular file at path, which lstat described as
// pre, into buf, whose length must be the file's size: the whole file or
// nothing. buf's spare capacity is scratch, as on unix. It is not ok
// when path is no longer the file pre describes, is not a regular file,
// has another size or more bytes than that, or cannot be read. It
// returns what the opened file says of its permission bits and
// modification time.
func ReadRegular(path string, pre fs.FileInfo, buf []byte) (fs.FileMode, time.Time, bool) {
	if pre.Size() != int64(len(buf)) {
		return 0, time.Time{}, false
	}
	f, err := OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return 0, time.Time{}, false
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !os.SameFile(pre, info) || !info.Mode().IsRegular() || info.Size() != int64(len(buf)) {
		return 0, time.Time{}, false
	}
	if _, err := io.ReadFull(f, buf); err != nil {
		return 0, time.Time{}, false
	}
	// One byte more would be a file that grew since it was looked at.
	var more [1]byte
	if n, _ := f.Read(more[:]); n != 0 {
		return 0, time.Time{}, false
	}
	return info.Mode().Perm(), info.ModTime(), true
}
