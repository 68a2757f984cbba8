//go:build unix

package platform

import (
	"io/fs"
	"path"
	"time"

	"golang.org/x/sys/unix"
)

// StatDir is a directory whose entries are looked at many times, as a
// sync looks at every file of a skill's live copy before it keeps it:
// Lstat starts from a descriptor of the directory, so the kernel walks
// only the path beneath it, not the directory's own path again for every
// entry. On the VMs we measure on an lstat of a file seven folders down
// took 4.2 us, from its folder's descriptor 2.0 us.
type StatDir struct {
	fd   int
	path string
}

// OpenStatDir opens the directory path itself; a symbolic link or
// anything but a directory at path is refused.
func OpenStatDir(path string) (*StatDir, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, linkErr(path, &fs.PathError{Op: "open", Path: path, Err: err})
	}
	return &StatDir{fd: fd, path: path}, nil
}

// Lstat describes the entry at the slash path rel beneath d without
// following a link at its last element, as os.Lstat of d's path joined
// with rel would; a link at an earlier element is followed, as there.
// Its Sys is a *unix.Stat_t.
func (d *StatDir) Lstat(rel string) (fs.FileInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, rel, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: d.path + "/" + rel, Err: err}
	}
	return &statInfo{name: path.Base(rel), st: st}, nil
}

// Close closes the directory.
func (d *StatDir) Close() error { return unix.Close(d.fd) }

// statInfo is what Fstatat said of one entry, as os.Lstat would say it.
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (i *statInfo) Name() string { return i.name }
func (i *statInfo) Size() int64  { return i.st.Size }
func (i *statInfo) IsDir() bool  { return i.Mode().IsDir() }
func (i *statInfo) Sys() any     { return &i.st }

func (i *statInfo) ModTime() time.Time {
	sec, nsec := i.st.Mtim.Unix()
	return time.Unix(sec, nsec)
}

// Mode converts the mode bits as package os does.
func (i *statInfo) Mode() fs.FileMode {
	m := uint32(i.st.Mode)
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
