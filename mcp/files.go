package mcp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/repository"
)

// skillPath checks that p names a path inside a skill and returns it in
// io/fs form. Backslashes count as separators, so a Windows-style path is
// judged as the same path.
func skillPath(skillName, p string) (string, error) {
	slashed := strings.ReplaceAll(p, "\\", "/")
	switch {
	case strings.TrimSpace(p) == "":
		return "", fmt.Errorf("give the path of a file in skill %s, relative to the skill, such as SKILL.md; load_skill lists its files", skillName)
	case path.IsAbs(slashed) || (len(slashed) > 1 && slashed[1] == ':'):
		return "", fmt.Errorf("path %q is absolute and refused: give a path relative to skill %s, as load_skill lists them", p, skillName)
	case strings.ContainsRune(p, 0):
		return "", fmt.Errorf("path %q holds a NUL, which no file's name does: give a path inside skill %s, as load_skill lists them", p, skillName)
	}
	clean := path.Clean(slashed)
	if clean == ".." || strings.HasPrefix(clean, "../") || !fs.ValidPath(clean) {
		return "", fmt.Errorf("path %q leads out of skill %s and is refused: give a path inside the skill, as load_skill lists them", p, skillName)
	}
	return clean, nil
}

// fileError turns an error of opening a skill's file into a message a
// model can act on.
func fileError(w *layering.Winner, p string, err error) error {
	name := w.Skill.Name
	switch {
	case errors.Is(err, repository.ErrOutside):
		return fmt.Errorf("%s in skill %s is a symbolic link that leads out of the skill; refused", p, name)
	case errors.Is(err, repository.ErrNotRegular):
		return fmt.Errorf("%s in skill %s is not a regular file; refused", p, name)
	case errors.Is(err, fs.ErrNotExist):
		msg := fmt.Sprintf("skill %s has no file %s", name, p)
		if near := nearFiles(w, p, 5); len(near) > 0 {
			msg += "; its files include " + strings.Join(near, ", ")
		}
		return errors.New(msg)
	}
	return fmt.Errorf("read %s of skill %s: %w", p, name, err)
}

// nearFiles returns up to n of the skill's files, those in the same
// directory as p or with the same base name first.
func nearFiles(w *layering.Winner, p string, n int) []string {
	dir, base := path.Split(p)
	var first, rest []string
	for _, f := range w.Skill.FileList() {
		d, b := path.Split(f.Path)
		if d == dir || strings.EqualFold(b, base) {
			first = append(first, f.Path)
		} else {
			rest = append(rest, f.Path)
		}
	}
	out := append(first, rest...)
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// fileText is a page of a file as read_skill_file returns it.
type fileText struct {
	text string
	size int64 // bytes in the whole file
	// start and end are the bytes of the file text is: start is the
	// offset asked for, moved back to the start of the character it fell
	// in; the rest of the file is from end on.
	start, end int64
	truncated  bool // end < size
	binary     bool
	mime       string
}

// sniffSize is how much of a file decides whether it is text.
const sniffSize = 8000

// readText reads at most maxChars characters of the file at p, from the
// byte offset on. An offset inside a UTF-8 character starts at that
// character, so a page never begins with half of one. A page with a NUL
// byte in its first sniffSize bytes or invalid UTF-8 is binary, and only
// the file's size and type are returned. At most maxChars*4 bytes are
// read, so a large file costs no more than a page of it; the bytes before
// offset are skipped, not kept.
func readText(fsys fs.FS, p string, offset int64, maxChars int) (fileText, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return fileText{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fileText{}, err
	}
	if info.IsDir() {
		return fileText{}, errIsDir
	}
	if offset < 0 || offset > info.Size() {
		return fileText{}, &offsetError{offset: offset, size: info.Size()}
	}
	// Up to 3 bytes before offset: the start of the character offset
	// may fall inside.
	from := max(0, offset-(utf8.UTFMax-1))
	if err := skip(f, from); err != nil {
		return fileText{}, err
	}
	back := int(offset - from)
	limit := int64(back) + int64(maxChars)*utf8.UTFMax
	data, err := io.ReadAll(io.LimitReader(f, limit))
	if err != nil {
		return fileText{}, err
	}
	full := int64(len(data)) == limit
	k := min(back, len(data))
	j := k
	for j > 0 && k-j < utf8.UTFMax-1 && j < len(data) && !utf8.RuneStart(data[j]) {
		j--
	}
	if j < len(data) && !utf8.RuneStart(data[j]) {
		j = k // not inside a character: invalid UTF-8, which is binary
	}
	data = data[j:]
	ft := fileText{start: from + int64(j)}
	ft.size = max(info.Size(), ft.start+int64(len(data)))
	// A read that stopped at the limit may have split the last character.
	valid := data
	if full {
		valid = trimPartialRune(data)
	}
	if bytes.IndexByte(data[:min(len(data), sniffSize)], 0) >= 0 || !utf8.Valid(valid) {
		ft.binary = true
		ft.mime = http.DetectContentType(data[:min(len(data), 512)])
		return ft, nil
	}
	text, _ := cutChars(string(valid), maxChars)
	ft.text = text
	ft.end = ft.start + int64(len(text))
	ft.truncated = ft.end < ft.size
	return ft, nil
}

// skip moves f n bytes on from its start: by seeking where f can, else
// by reading them.
func skip(f fs.File, n int64) error {
	if n == 0 {
		return nil
	}
	if s, ok := f.(io.Seeker); ok {
		_, err := s.Seek(n, io.SeekStart)
		return err
	}
	_, err := io.CopyN(io.Discard, f, n)
	return err
}

// offsetError is an offset that is not in the file.
type offsetError struct{ offset, size int64 }

func (e *offsetError) Error() string {
	return fmt.Sprintf("offset %d is not in the file, which is %d bytes: give 0 to %d, such as the next_offset of the page before", e.offset, e.size, e.size)
}

// readOn is the line that ends a page that leaves out the rest of its
// file: which bytes were shown, how many are left, and the call that
// reads on.
func readOn(name, p string, ft fileText) string {
	chars := utf8.RuneCountInString(ft.text)
	shown := fmt.Sprintf("the first %d characters are shown (bytes 0 to %d of %d)", chars, ft.end, ft.size)
	if ft.start > 0 {
		shown = fmt.Sprintf("%d characters are shown, bytes %d to %d of %d", chars, ft.start, ft.end, ft.size)
	}
	return fmt.Sprintf("\n\n[truncated: %s; %d bytes are left: read_skill_file(name=%q, path=%q, offset=%d) reads on]",
		shown, ft.size-ft.end, name, p, ft.end)
}

var errIsDir = errors.New("is a directory")

// errTooLarge is a binary file over the resource limit.
var errTooLarge = errors.New("too large to send as a resource")

// trimPartialRune drops an incomplete UTF-8 sequence at the end of data.
func trimPartialRune(data []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(data); i++ {
		if utf8.RuneStart(data[len(data)-i]) {
			if !utf8.FullRune(data[len(data)-i:]) {
				return data[:len(data)-i]
			}
			break
		}
	}
	return data
}

// cutChars returns the first n characters of s and true when s is longer.
func cutChars(s string, n int) (string, bool) {
	count := 0
	for i := range s {
		if count == n {
			return s[:i], true
		}
		count++
	}
	return s, false
}

// readAll reads a whole file of at most limit bytes, for resources.
func readAll(fsys fs.FS, p string, limit int64) ([]byte, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		return nil, errIsDir
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is over %d bytes: %w", p, limit, errTooLarge)
	}
	return data, nil
}

// isText reports whether data reads as text.
func isText(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), sniffSize)], 0) < 0 && utf8.Valid(data)
}
