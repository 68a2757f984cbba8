// Package jsonfile reads and writes skillsync's versioned JSON record
// files (the cache manifest, target records, and the like). Every record
// file lives in a workspace anyone may have committed to, so Read treats
// it as untrusted input: it is opened without following a symbolic link,
// its size is capped, and its decoded content must pass the record's own
// Validate before the caller sees it.
package jsonfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/skillsync/skillsync/internal/atomicfile"
)

// MaxSize is the largest record file Read accepts. A bigger one is
// corrupt: decoding it could exhaust memory.
const MaxSize = 256 << 20

// Record is the decoded content of a record file.
type Record interface {
	// Validate reports why decoded content must not be used: a version
	// this build does not read, a name that is not one safe path
	// component, a path that leaves its directory.
	Validate() error
}

// FastRecord is a Record that can decode the shape it writes without
// reflection. Read tries DecodeFast first; when it reports false, the
// record must be as it was, and encoding/json decodes the file. Either
// way Validate checks the result. data is the file as read into a buffer
// of its own, which nothing writes again: what DecodeFast decodes may
// share its memory.
type FastRecord interface {
	Record
	DecodeFast(data []byte) bool
}

// ErrCorrupt is wrapped by every *CorruptError.
var ErrCorrupt = errors.New("record file is corrupt")

// CorruptError is a record file that exists but must not be used.
type CorruptError struct {
	Path string
	Err  error
}

func (e *CorruptError) Error() string { return fmt.Sprintf("%s is corrupt: %v", e.Path, e.Err) }

// Unwrap returns the reason.
func (e *CorruptError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// Read decodes the file name into v (by v's DecodeFast first, for a
// FastRecord) and validates it. A missing file
// gives an error wrapping fs.ErrNotExist. A file that is a symbolic link,
// not a regular file, larger than MaxSize, not JSON, or that v.Validate
// refuses gives a *CorruptError: the caller must not use v then. Other
// errors (permission) are returned as they come.
func Read(name string, v Record) error {
	data, err := atomicfile.ReadBounded(name, MaxSize)
	return decode(name, data, err, v)
}

// decode is Read of what reading the file name gave.
func decode(name string, data []byte, err error, v Record) error {
	switch {
	case errors.Is(err, atomicfile.ErrSymlink):
		return &CorruptError{Path: name, Err: errors.New("it is a symbolic link")}
	case errors.Is(err, atomicfile.ErrNotRegular), errors.Is(err, atomicfile.ErrTooLarge):
		return &CorruptError{Path: name, Err: err}
	case err != nil:
		return err
	}
	if fast, ok := v.(FastRecord); !ok || !fast.DecodeFast(data) {
		if err := json.Unmarshal(data, v); err != nil {
			return &CorruptError{Path: name, Err: err}
		}
	}
	if err := v.Validate(); err != nil {
		return &CorruptError{Path: name, Err: err}
	}
	return nil
}

// Write stores v as indented JSON with a final newline, atomically, unless
// name already holds exactly those bytes: a run that changed nothing
// writes nothing. Map keys come out sorted, so the same value gives the
// same bytes. A symbolic link at name is refused, never followed.
func Write(name string, v any, perm fs.FileMode) error {
	return atomicfile.WriteJSONIfChanged(name, v, perm)
}

// WriteOnly is Write for a file in a large folder whose leftover
// temporary files its writer sweeps under its lock (atomicfile.Sweep):
// the write does not list the folder again.
func WriteOnly(name string, v any, perm fs.FileMode) error {
	return atomicfile.WriteJSONIfChangedOnly(name, v, perm)
}

// setAsideStamp is the UTC time format of a set-aside file's suffix.
const setAsideStamp = "20060102T150405Z"

// IsSetAside reports whether name is what SetAside made of the record file
// named record: record.corrupt-<UTC stamp>, or with -N after the stamp
// when that name was taken.
func IsSetAside(name, record string) bool {
	rest, ok := strings.CutPrefix(name, record+".corrupt-")
	if !ok || len(rest) < len(setAsideStamp) {
		return false
	}
	if _, err := time.Parse(setAsideStamp, rest[:len(setAsideStamp)]); err != nil {
		return false
	}
	n, ok := strings.CutPrefix(rest[len(setAsideStamp):], "-")
	if !ok {
		return rest == rest[:len(setAsideStamp)]
	}
	_, err := strconv.ParseUint(n, 10, 32)
	return err == nil
}

// SetAside renames a corrupt record file, or a symbolic link in its place,
// to <name>.corrupt-<UTC stamp> so nothing is lost and the next write
// starts afresh. It returns the new name.
func SetAside(name string, now time.Time) (string, error) {
	base := name + ".corrupt-" + now.UTC().Format(setAsideStamp)
	aside := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(aside); errors.Is(err, fs.ErrNotExist) {
			break
		}
		aside = fmt.Sprintf("%s-%d", base, i)
	}
	if err := os.Rename(name, aside); err != nil {
		return "", fmt.Errorf("set aside %s: %w", name, err)
	}
	return aside, nil
}

// CheckVersion reports an error when got is not one of the versions a
// record format reads.
func CheckVersion(got int, readable ...int) error {
	for _, v := range readable {
		if got == v {
			return nil
		}
	}
	return fmt.Errorf("format version %d, this skillsync reads %v", got, readable)
}
