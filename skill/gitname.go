package skill

import "strings"

// GitName reports whether elem, one path element, is a git repository's
// folder on some file system a skill is written to: ".git" in any case
// (macOS and Windows fold case), with trailing dots or spaces (Windows
// drops them), with an NTFS stream after a colon
// (".git::$INDEX_ALLOCATION"), or as its 8.3 short name "GIT~1". The
// rule is the same on every system, so a skill holds the same files, and
// has the same hash, wherever it is read.
//
// Why it matters: git takes a folder holding a ".git" folder, or a
// ".git" file naming one ("gitdir: assets/repo"), for a repository, and
// runs what that repository's config says (core.fsmonitor) as soon as
// anyone, or any shell prompt, runs git status inside it. A skill
// carrying one would run its author's commands on every machine that
// syncs it.
func GitName(elem string) bool {
	if i := strings.IndexByte(elem, ':'); i >= 0 {
		elem = elem[:i]
	}
	elem = strings.TrimRight(elem, ". ")
	return strings.EqualFold(elem, ".git") || strings.EqualFold(elem, "git~1")
}

// GitPath reports whether a slash-separated path holds an element
// GitName names.
func GitPath(p string) bool {
	for elem := range strings.SplitSeq(p, "/") {
		if GitName(elem) {
			return true
		}
	}
	return false
}
