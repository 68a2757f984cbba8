// Package diff compares two sets of skill files: which files one adds,
// changes and removes against the other, and the unified diff between
// them in git's format, with Myers' line diff bounded in time and memory.
package diff

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/skillsync/skillsync/skill"
)

// Files is a skill's files: where to read them and which they are. The
// zero Files is a skill with no file.
type Files struct {
	FS   fs.FS
	List []skill.File
}

// Changes is which files one side adds, changes and removes against the
// other, each list in path order and never nil.
type Changes struct {
	Added   []string
	Changed []string
	Removed []string
}

// Compare returns which files new adds to old, changes (content or the
// executable bit) and removes. Contents are compared as streams.
func Compare(ctx context.Context, old, new Files) (Changes, error) {
	var d Changes
	err := pairs(old, new, func(p string, o, n *skill.File) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		switch {
		case o == nil:
			d.Added = append(d.Added, p)
		case n == nil:
			d.Removed = append(d.Removed, p)
		default:
			same, err := sameFile(old.FS, new.FS, *o, *n)
			if err != nil {
				return err
			}
			if !same {
				d.Changed = append(d.Changed, p)
			}
		}
		return nil
	})
	d.Added, d.Changed, d.Removed = orEmpty(d.Added), orEmpty(d.Changed), orEmpty(d.Removed)
	return d, err
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// pairs calls fn for every path of old and new in path order, with nil
// for the side that lacks it.
func pairs(old, new Files, fn func(p string, o, n *skill.File) error) error {
	byPath := map[string][2]*skill.File{}
	for i := range old.List {
		e := byPath[old.List[i].Path]
		e[0] = &old.List[i]
		byPath[old.List[i].Path] = e
	}
	for i := range new.List {
		e := byPath[new.List[i].Path]
		e[1] = &new.List[i]
		byPath[new.List[i].Path] = e
	}
	paths := make([]string, 0, len(byPath))
	for p := range byPath {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := fn(p, byPath[p][0], byPath[p][1]); err != nil {
			return err
		}
	}
	return nil
}

func executable(m fs.FileMode) bool { return m&0o111 != 0 }

// sameFile compares two files by size, executable bit and content.
func sameFile(ofs, nfs fs.FS, o, n skill.File) (bool, error) {
	if o.Size != n.Size || executable(o.Mode) != executable(n.Mode) {
		return false, nil
	}
	a, err := ofs.Open(o.Path)
	if err != nil {
		return false, fmt.Errorf("compare %s: %w", o.Path, err)
	}
	defer a.Close()
	b, err := nfs.Open(n.Path)
	if err != nil {
		return false, fmt.Errorf("compare %s: %w", n.Path, err)
	}
	defer b.Close()
	ba, bb := make([]byte, 32<<10), make([]byte, 32<<10)
	for {
		na, errA := io.ReadFull(a, ba)
		nb, errB := io.ReadFull(b, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		doneA := errA == io.EOF || errA == io.ErrUnexpectedEOF
		doneB := errB == io.EOF || errB == io.ErrUnexpectedEOF
		if errA != nil && !doneA {
			return false, fmt.Errorf("compare %s: %w", o.Path, errA)
		}
		if errB != nil && !doneB {
			return false, fmt.Errorf("compare %s: %w", n.Path, errB)
		}
		if doneA || doneB {
			return doneA == doneB, nil
		}
	}
}

// Limits of the line diff: a larger file, or one that is not text, is
// said to differ without its lines; more edits than maxEdits show the
// changed region as removed whole and added whole.
const (
	maxDiffFile = 1 << 20
	maxEdits    = 1000
	diffContext = 3
)

// Write writes the unified diff from old to new, file by file in path
// order, in git's format (diff --git a/P b/P, ---/+++ headers, hunks with
// three lines of context), so it can be read as a review or applied with
// git apply. A binary file, or one over 1 MiB, is named without its lines.
func Write(ctx context.Context, w io.Writer, old, new Files) error {
	bw := bufio.NewWriter(w)
	err := pairs(old, new, func(p string, o, n *skill.File) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if o != nil && n != nil {
			same, err := sameFile(old.FS, new.FS, *o, *n)
			if err != nil || same {
				return err
			}
		}
		return writeFileDiff(bw, p, old.FS, new.FS, o, n)
	})
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}

// quotePath writes a path as git does: as it is, or, when it holds a
// control character, a quote, a backslash or a byte past ASCII, in double
// quotes with those bytes escaped (\033), so that a file name from a
// draft cannot act on the terminal that shows the diff, and git apply
// still reads it.
func quotePath(p string) string {
	plain := true
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			plain = false
			break
		}
	}
	if plain {
		return p
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func gitMode(m fs.FileMode) string {
	if executable(m) {
		return "100755"
	}
	return "100644"
}

func writeFileDiff(w *bufio.Writer, p string, ofs, nfs fs.FS, o, n *skill.File) error {
	from, to := quotePath("a/"+p), quotePath("b/"+p)
	fmt.Fprintf(w, "diff --git %s %s\n", from, to)
	switch {
	case o == nil:
		fmt.Fprintf(w, "new file mode %s\n", gitMode(n.Mode))
		from = "/dev/null"
	case n == nil:
		fmt.Fprintf(w, "deleted file mode %s\n", gitMode(o.Mode))
		to = "/dev/null"
	case executable(o.Mode) != executable(n.Mode):
		fmt.Fprintf(w, "old mode %s\nnew mode %s\n", gitMode(o.Mode), gitMode(n.Mode))
	}
	// The index line names both blobs as git would, which lets git apply
	// tell a binary change and fall back on --3way.
	oldID, newID := strings.Repeat("0", 40), strings.Repeat("0", 40)
	if o != nil {
		id, err := blobID(ofs, *o)
		if err != nil {
			return err
		}
		oldID = id
	}
	if n != nil {
		id, err := blobID(nfs, *n)
		if err != nil {
			return err
		}
		newID = id
	}
	if o != nil && n != nil && executable(o.Mode) == executable(n.Mode) {
		fmt.Fprintf(w, "index %s..%s %s\n", oldID, newID, gitMode(n.Mode))
	} else {
		fmt.Fprintf(w, "index %s..%s\n", oldID, newID)
	}
	var a, b []byte
	var err error
	if o != nil {
		if a, err = readForDiff(ofs, *o); err != nil {
			return err
		}
	}
	if n != nil {
		if b, err = readForDiff(nfs, *n); err != nil {
			return err
		}
	}
	if (o != nil && a == nil) || (n != nil && b == nil) {
		fmt.Fprintf(w, "Binary files %s and %s differ\n", from, to)
		return nil
	}
	if bytes.Equal(a, b) {
		return nil // only the mode changed
	}
	fmt.Fprintf(w, "--- %s\n+++ %s\n", from, to)
	writeHunks(w, splitLines(a), splitLines(b))
	return nil
}

// blobID is the git blob hash of a file's content, streamed.
func blobID(fsys fs.FS, f skill.File) (string, error) {
	r, err := fsys.Open(f.Path)
	if err != nil {
		return "", fmt.Errorf("diff %s: %w", f.Path, err)
	}
	defer r.Close()
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", f.Size)
	n, err := io.Copy(h, io.LimitReader(r, f.Size+1))
	if err != nil {
		return "", fmt.Errorf("diff %s: %w", f.Path, err)
	}
	if n != f.Size {
		return "", fmt.Errorf("diff %s: the file changed while it was read", f.Path)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// readForDiff returns a text file's content, or nil for one that is too
// large or not text.
func readForDiff(fsys fs.FS, f skill.File) ([]byte, error) {
	if f.Size > maxDiffFile {
		return nil, nil
	}
	r, err := fsys.Open(f.Path)
	if err != nil {
		return nil, fmt.Errorf("diff %s: %w", f.Path, err)
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, maxDiffFile+1))
	if err != nil {
		return nil, fmt.Errorf("diff %s: %w", f.Path, err)
	}
	if len(data) > maxDiffFile || bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return nil, nil
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

// splitLines splits text after each newline; a last line without one
// keeps none.
func splitLines(data []byte) []string {
	var out []string
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			out = append(out, string(data))
			break
		}
		out = append(out, string(data[:i+1]))
		data = data[i+1:]
	}
	return out
}

type editKind int8

const (
	same editKind = iota
	del
	ins
)

// edit is one line of a diff: ai and bi are the line's index in a and b,
// or for a line only one side has, the other side's position.
type edit struct {
	kind   editKind
	ai, bi int
}

// lineEdits returns the edits that turn a into b: Myers' O((N+M)D)
// algorithm on what lies between the common head and tail, giving up
// after maxEdits edits to a whole replacement of that middle.
func lineEdits(a, b []string) []edit {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var out []edit
	for i := 0; i < pre; i++ {
		out = append(out, edit{same, i, i})
	}
	mid := myers(a[pre:len(a)-suf], b[pre:len(b)-suf])
	if mid == nil {
		for i := pre; i < len(a)-suf; i++ {
			out = append(out, edit{del, i, pre})
		}
		for j := pre; j < len(b)-suf; j++ {
			out = append(out, edit{ins, len(a) - suf, j})
		}
	} else {
		for _, e := range mid {
			out = append(out, edit{e.kind, e.ai + pre, e.bi + pre})
		}
	}
	for i := 0; i < suf; i++ {
		out = append(out, edit{same, len(a) - suf + i, len(b) - suf + i})
	}
	return out
}

// myers returns the shortest edit script from a to b, or nil when it
// needs more than maxEdits edits. It keeps, for each step d, the
// furthest x on every diagonal in [-d-1, d+1]: O(D²) memory.
func myers(a, b []string) []edit {
	n, m := len(a), len(b)
	if n == 0 && m == 0 {
		return []edit{}
	}
	var trace [][]int32   // trace[d][k+d+1] is v[k] before step d
	v := []int32{0, 0, 0} // k in [-1, 1] before step 0: v[1] = 0
	get := func(v []int32, d, k int) int { return int(v[k+d+1]) }
	found := -1
	for d := 0; d <= maxEdits && found < 0; d++ {
		trace = append(trace, v)
		next := make([]int32, 2*(d+1)+1) // k in [-d-1, d+1] for step d+1
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && get(v, d, k-1) < get(v, d, k+1)) {
				x = get(v, d, k+1)
			} else {
				x = get(v, d, k-1) + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			next[k+d+2] = int32(x)
			if x >= n && y >= m {
				found = d
				break
			}
		}
		v = next
	}
	if found < 0 {
		return nil
	}
	var rev []edit
	x, y := n, m
	for d := found; d >= 0; d-- {
		v := trace[d]
		k := x - y
		prevK := k - 1
		if k == -d || (k != d && get(v, d, k-1) < get(v, d, k+1)) {
			prevK = k + 1
		}
		prevX := get(v, d, prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x--
			y--
			rev = append(rev, edit{same, x, y})
		}
		if d > 0 {
			if x == prevX {
				rev = append(rev, edit{ins, x, prevY})
			} else {
				rev = append(rev, edit{del, prevX, y})
			}
		}
		x, y = prevX, prevY
	}
	out := make([]edit, len(rev))
	for i, e := range rev {
		out[len(rev)-1-i] = e
	}
	return out
}

// writeHunks writes the hunks of the diff from a to b.
func writeHunks(w *bufio.Writer, a, b []string) {
	edits := lineEdits(a, b)
	for i := 0; i < len(edits); {
		if edits[i].kind == same {
			i++
			continue
		}
		start := max(0, i-diffContext)
		last := i
		for j := i; j < len(edits); j++ {
			if edits[j].kind != same {
				last = j
			} else if j-last > 2*diffContext {
				break
			}
		}
		stop := min(len(edits), last+diffContext+1)
		writeHunk(w, a, b, edits[start:stop])
		i = stop
	}
}

func writeHunk(w *bufio.Writer, a, b []string, h []edit) {
	aStart, bStart := h[0].ai, h[0].bi
	aCount, bCount := 0, 0
	for _, e := range h {
		if e.kind != ins {
			aCount++
		}
		if e.kind != del {
			bCount++
		}
	}
	fmt.Fprintf(w, "@@ -%s +%s @@\n", hunkRange(aStart, aCount), hunkRange(bStart, bCount))
	for _, e := range h {
		switch e.kind {
		case same:
			writeLine(w, ' ', a[e.ai])
		case del:
			writeLine(w, '-', a[e.ai])
		case ins:
			writeLine(w, '+', b[e.bi])
		}
	}
}

// hunkRange is a hunk side's start,count: 1-based, and for an empty side
// the line before it.
func hunkRange(start, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if count == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

func writeLine(w *bufio.Writer, prefix byte, line string) {
	w.WriteByte(prefix)
	w.WriteString(line)
	if !strings.HasSuffix(line, "\n") {
		w.WriteString("\n\\ No newline at end of file\n")
	}
}
