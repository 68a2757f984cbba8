//go:build unix

package platform

import (
	"io/fs"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ReadRegular reads the regular file at path, which lstat described as
// pre, into buf, whose length must be the file's size: the whole file or
// nothing. buf's spare capacity is scratch: the byte past len(buf) may be
// written. It is not ok when path is no longer the file pre describes
// (the same device and inode), is not a regular file, has another size
// or more bytes than that, or cannot be read. It returns what the opened
// file says of its permission bits and modification time.
//
// It opens and reads by descriptor, without an *os.File: on Linux
// os.Open also asks epoll to watch the file, which a regular file
// refuses, and a sync that reads back a thousand files from its cache
// pays a system call for each, a few microseconds apiece on a VM.
func ReadRegular(path string, pre fs.FileInfo, buf []byte) (fs.FileMode, time.Time, bool) {
	want, ok := pre.Sys().(*syscall.Stat_t)
	if !ok || pre.Size() != int64(len(buf)) {
		return 0, time.Time{}, false
	}
	fd, err := openRetry(path)
	if err != nil {
		return 0, time.Time{}, false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || uint64(st.Dev) != uint64(want.Dev) || uint64(st.Ino) != uint64(want.Ino) ||
		st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size != int64(len(buf)) {
		return 0, time.Time{}, false
	}
	if !readExactly(fd, buf) {
		return 0, time.Time{}, false
	}
	mtime := time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec))
	return fs.FileMode(st.Mode & 0o777), mtime, true
}

// readExactly fills buf from fd and checks that the file ends there. It
// asks for one byte more than buf holds, where buf has the room: a
// regular file's read on Linux's file systems returns less than asked
// only at its end, so one read usually both fills buf and shows the end
// (POSIX does not promise it; reuse checks the bytes' hash all the same).
func readExactly(fd int, buf []byte) bool {
	room := buf[:min(len(buf)+1, cap(buf))]
	got, short := 0, false
	for got < len(buf) {
		n, err := readRetry(fd, room[got:])
		if err != nil || n == 0 {
			return false
		}
		short = n < len(room)-got
		got += n
	}
	if got > len(buf) {
		return false // the file grew since it was looked at
	}
	if short {
		return true
	}
	var more [1]byte
	n, err := readRetry(fd, more[:])
	return err == nil && n == 0
}

// openRetry opens path for reading, not following a link at it, tried
// again when a signal interrupted it (as os.Open does: on a network file
// system the runtime's own preemption signals can).
func openRetry(path string) (int, error) {
	for {
		fd, err := unix.Open(path, unix.O_RDONLY|noFollow, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// readRetry is one read, tried again when a signal interrupted it.
func readRetry(fd int, b []byte) (int, error) {
	for {
		n, err := unix.Read(fd, b)
		if err != unix.EINTR {
			return n, err
		}
	}
}
