package platform

import "strings"

// shortPath is the length from which a Windows path needs its extended
// form: a folder's path must leave room for an 8.3 name within MAX_PATH
// (260), so Windows takes 248 as the limit, and so does os.
const shortPath = 248

// extendedPath returns the extended-length form (\\?\C:\... or
// \\?\UNC\server\share\...) of p, an absolute and cleaned Windows path
// of shortPath characters or more; any other path comes back as it is.
// The os package does this for its own calls; a Win32 call made
// directly (MoveFileEx) is held to MAX_PATH without it, and a cache deep
// in a workspace fails there. It is plain string work, here rather than
// in a _windows file, so that its cases are tested on every system.
func extendedPath(p string) string {
	switch {
	case len(p) < shortPath, strings.HasPrefix(p, `\\?\`), strings.HasPrefix(p, `\\.\`):
		return p
	case strings.HasPrefix(p, `\\`):
		return `\\?\UNC\` + p[len(`\\`):]
	case len(p) >= 3 && p[1] == ':' && p[2] == '\\':
		return `\\?\` + p
	}
	return p
}
