// Package skilltest writes the files and skill folders tests work on:
// one place for what every package's tests used to write for themselves.
// Every function fails the test on an error, so a call site states only
// what it needs.
package skilltest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// SkillMD returns a valid SKILL.md: front matter with name, description
// and the YAML lines of extra (such as "metadata:\n  author: agent-7"),
// then a heading naming the skill.
func SkillMD(name, description string, extra ...string) string {
	var b strings.Builder
	b.WriteString("---\nname: " + name + "\ndescription: " + description + "\n")
	for _, e := range extra {
		b.WriteString(e + "\n")
	}
	b.WriteString("---\n# " + name + "\n")
	return b.String()
}

// Skill writes the skill folder <dir>/<name>: a SKILL.md made by SkillMD,
// then files as Write writes them (a "SKILL.md" among them replaces the
// one made). It returns the folder.
func Skill(t testing.TB, dir, name, description string, files map[string]string) string {
	t.Helper()
	folder := filepath.Join(dir, name)
	WriteFile(t, filepath.Join(folder, "SKILL.md"), SkillMD(name, description))
	Write(t, folder, files)
	return folder
}

// Write writes files below dir, making the folders they need. A key is a
// slash-separated path relative to dir; a file whose path ends in .sh is
// executable (0755), every other one 0644.
func Write(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		perm := fs.FileMode(0o644)
		if strings.HasSuffix(p, ".sh") {
			perm = 0o755
		}
		WriteFileMode(t, filepath.Join(dir, filepath.FromSlash(p)), content, perm)
	}
}

// WriteFile writes content to the file at path (0644), making its
// missing parent folders.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	WriteFileMode(t, path, content, 0o644)
}

// WriteFileMode is WriteFile with the permission bits perm, set exactly
// whatever the umask and whatever the file had before.
func WriteFileMode(t testing.TB, path, content string, perm fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
}

// Append appends s to the file at path, creating it (0644) and its
// parent folders when missing: the way an agent's transcript grows, a
// line perhaps still without its newline.
func Append(t testing.TB, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// AppendLines appends each line and a newline to the file at path, as
// Append does.
func AppendLines(t testing.TB, path string, lines ...string) {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	Append(t, path, b.String())
}

// ReadFile returns the content of the file at path.
func ReadFile(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// Exists reports whether something is at path, a dangling symbolic link
// included: the link itself is looked at, not what it points to.
func Exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// Buffer is a bytes.Buffer that goroutines share: a log or a process's
// output that the test reads while it is written.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
