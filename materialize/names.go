package materialize

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/skillsync/skillsync/skill"
)

// maxPathLen bounds a file's path inside a skill, in bytes. With the
// destination's own path in front it must stay under PATH_MAX (4096).
const maxPathLen = 1024

// checkName reports an error when name cannot be used as one directory
// name in a destination: a source or skill name from a caller or, above
// all, from a record file, which anyone may have committed. It is the
// skill package's rule (no "/", "\" or NUL, not starting with ".", at
// most 255 bytes), and the name must be valid UTF-8 so that a record can
// hold it.
func checkName(kind, name string) error {
	if !skill.ValidName(name) || !utf8.ValidString(name) {
		return fmt.Errorf("%s name %q is not one safe path component", kind, name)
	}
	return nil
}

// checkFilePath reports an error when p cannot be a file of a skill:
// it must be relative, slash-separated, valid UTF-8, at most maxPathLen
// bytes, and each element not empty, not "." or "..", free of "\" and
// NUL, at most 255 bytes. An element may start with "." (a skill may
// ship .env.example).
func checkFilePath(p string) error {
	bad := func(why string) error { return fmt.Errorf("file path %q %s", p, why) }
	switch {
	case p == "":
		return errors.New("empty file path")
	case !utf8.ValidString(p):
		return bad("is not valid UTF-8")
	case len(p) > maxPathLen:
		return bad(fmt.Sprintf("is longer than %d bytes", maxPathLen))
	}
	// One pass over the bytes: a sync checks every path of its records,
	// 100,000 for 10,000 skills, and splitting each into elements was
	// 63% of decoding them (BenchmarkDaemonSync's profile).
	start := 0
	for i := 0; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			if p[i] == '\\' || p[i] == 0 {
				return bad(`holds "\" or NUL`)
			}
			continue
		}
		switch elem := p[start:i]; {
		case elem == "" || elem == "." || elem == "..":
			return bad("is not a clean relative path")
		case len(elem) > 255:
			return bad("has an element longer than 255 bytes")
		}
		start = i + 1
	}
	return nil
}
