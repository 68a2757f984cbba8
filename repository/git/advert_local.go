package git

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
)

// localAdvertisement reads the ref advertisement of a repository on this
// machine from its files, as git upload-pack --advertise-refs would
// write it: HEAD and the branch it names, every ref under refs/ (loose
// ones over packed-refs), and what each annotated tag peels to. Starting
// git upload-pack for it cost every sync of a file:// source a process
// (8 ms of CPU, and more wall time, on the benchmark's machine); this is a
// few reads.
//
// It answers only for the plain case and reports false for any other,
// which git upload-pack then answers, as before: a folder that is not a
// git folder itself or a work tree's .git, a linked work tree, refs in
// another format (reftable), config that hides refs or includes other
// files, a namespace, a repository another user owns (git's
// safe.directory decides about those), a ref git would skip or could
// not resolve (a broken ref, an object not in a pack, a symbolic ref
// under refs/), a listing over lim.
func localAdvertisement(path string, lim advertisementLimits) (*packp.AdvRefs, bool) {
	if os.Getenv("GIT_NAMESPACE") != "" || os.Getenv("GIT_CONFIG_COUNT") != "" || os.Getenv("GIT_CONFIG_PARAMETERS") != "" {
		return nil, false
	}
	dir, ok := localGitDir(path)
	if !ok || !ownedByMe(dir) || hidesRefs(filepath.Join(dir, "config"), true) || globalConfigHidesRefs() {
		return nil, false
	}
	if _, err := os.Lstat(filepath.Join(dir, "commondir")); err == nil {
		return nil, false
	}
	// A symlink HEAD is a symbolic ref to git: left to it.
	head, err := readRegular(filepath.Join(dir, "HEAD"), maxRefFile, false)
	if err != nil {
		return nil, false
	}
	refs, ok := packedRefs(filepath.Join(dir, "packed-refs"), lim)
	if !ok || !looseRefs(dir, "refs", refs, lim) {
		return nil, false
	}
	q := openQuickObjects(dir)
	defer q.Close()
	ar := packp.NewAdvRefs()
	size, count := int64(0), 0
	for name, r := range refs {
		h := r.hash
		peeled := r.peeled
		if !r.fullyPeeled {
			// Loose (or packed without peeled values): is it a tag?
			p, ok := q.peel(h)
			if !ok {
				return nil, false
			}
			if p != h {
				peeled = &p
			}
		} else if _, _, ok := q.find(h); !ok {
			return nil, false
		}
		ar.References[name] = h
		size += int64(4 + 41 + len(name) + 1)
		count++
		if peeled != nil {
			ar.Peeled[name] = *peeled
			size += int64(4 + 41 + len(name) + 4)
			count++
		}
	}
	// git trims the end only: a detached HEAD after a space is no
	// repository to it.
	switch s := strings.TrimRightFunc(string(head), unicode.IsSpace); {
	case strings.HasPrefix(s, "ref: "):
		target := strings.TrimPrefix(s, "ref: ")
		h, ok := ar.References[target]
		if !ok {
			return nil, false // an unborn branch: upload-pack says no HEAD
		}
		ar.Head = &h
		if err := ar.Capabilities.Add(capability.SymRef, "HEAD:"+target); err != nil {
			return nil, false
		}
		if p, ok := ar.Peeled[target]; ok {
			ar.Peeled["HEAD"] = p
		}
	default:
		h, ok := hexHash(s)
		if !ok {
			return nil, false
		}
		p, ok := q.peel(h)
		if !ok {
			return nil, false
		}
		ar.Head = &h
		if p != h {
			ar.Peeled["HEAD"] = p
		}
	}
	// upload-pack peels HEAD as it does every ref (HEAD^{}).
	if _, ok := ar.Peeled["HEAD"]; ok {
		size += int64(4 + 41 + len("HEAD") + 4)
		count++
	}
	size += int64(4 + 41 + len("HEAD") + 1)
	count++
	if count > lim.refs || size > lim.bytes || len(ar.References) == 0 {
		return nil, false
	}
	return ar, true
}

// localGitDir returns the git folder at path: path itself when it is
// one (a bare repository), or its .git folder (a work tree).
func localGitDir(path string) (string, bool) {
	for _, dir := range []string{path, filepath.Join(path, ".git")} {
		info, err := os.Lstat(dir)
		if err != nil || !info.IsDir() {
			continue
		}
		if isGitDir(dir) {
			return dir, true
		}
	}
	return "", false
}

func isGitDir(dir string) bool {
	for _, name := range []string{"HEAD", "objects", "refs", "config"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err != nil {
			return false
		}
	}
	return true
}

// hidesRefs reports whether a git config file may change what upload-pack
// advertises: hidden refs, includes of other files, another ref format,
// a repository extension (git refuses one it does not know).
// A file that cannot be read counts as hiding when required.
func hidesRefs(config string, required bool) bool {
	b, err := readRegular(config, maxConfigFile, true)
	if err != nil {
		return required || !errors.Is(err, fs.ErrNotExist)
	}
	s := strings.ToLower(string(b))
	for _, word := range []string{"hiderefs", "include", "refstorage", "worktreeconfig", "extensions"} {
		if strings.Contains(s, word) {
			return true
		}
	}
	return false
}

// globalConfigHidesRefs looks at the user's and the system's git config
// for what hidesRefs looks for.
func globalConfigHidesRefs() bool {
	files := []string{"/etc/gitconfig"}
	if f := os.Getenv("GIT_CONFIG_SYSTEM"); f != "" {
		files[0] = f
	}
	if f := os.Getenv("GIT_CONFIG_GLOBAL"); f != "" {
		files = append(files, f)
	} else {
		if home, err := os.UserHomeDir(); err == nil {
			files = append(files, filepath.Join(home, ".gitconfig"))
		}
		if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
			files = append(files, filepath.Join(x, "git", "config"))
		} else if home, err := os.UserHomeDir(); err == nil {
			files = append(files, filepath.Join(home, ".config", "git", "config"))
		}
	}
	for _, f := range files {
		if hidesRefs(f, false) {
			return true
		}
	}
	return false
}

// localRef is one ref of a repository read from its files.
type localRef struct {
	hash plumbing.Hash
	// fullyPeeled: packed-refs said what the ref peels to (peeled, or
	// nil when it names no tag).
	fullyPeeled bool
	peeled      *plumbing.Hash
}

// hexHash parses a full hash; the null one, which git takes for a
// broken ref, is refused.
func hexHash(s string) (plumbing.Hash, bool) {
	var h plumbing.Hash
	if len(s) != 40 || !fullSHA.MatchString(s) {
		return h, false
	}
	_, err := hex.Decode(h[:], []byte(s))
	return h, err == nil && !h.IsZero()
}

// Bounds on a ref file (HEAD, a loose ref) and a config file read here;
// a larger one is left to git.
const (
	maxRefFile    = 4 << 10
	maxConfigFile = 1 << 20
)

// readRegular reads name whole when it is a regular file of at most max
// bytes: a FIFO, a device, or a symlink when follow is false, is refused
// rather than waited on or read without end.
func readRegular(name string, max int64, follow bool) ([]byte, error) {
	f, err := openRegular(name, follow)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("%s: over %d bytes", name, max)
	}
	return b, err
}

// refNameOK reports whether git's check-ref-format accepts name (a full
// name, under refs/); git skips, advertises as broken or dies on any
// other, so such a ref is left to it.
func refNameOK(name string) bool {
	if !strings.HasPrefix(name, "refs/") || strings.Contains(name, "..") || strings.Contains(name, "@{") {
		return false
	}
	for _, c := range []byte(name) {
		if c < 0x20 || c == 0x7f || strings.IndexByte(" ~^:?*[\\", c) >= 0 {
			return false
		}
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" || part[0] == '.' || strings.HasSuffix(part, ".lock") {
			return false
		}
	}
	return !strings.HasSuffix(name, ".")
}

// packedRefs reads a packed-refs file; a missing one holds no ref. Its
// only comment is the first line, git's header, and a peeled line
// follows the ref it peels, as git requires; a file larger than the
// advertisement it could make under lim is not read.
func packedRefs(name string, lim advertisementLimits) (map[string]*localRef, bool) {
	refs := map[string]*localRef{}
	f, err := openRegular(name, false)
	if errors.Is(err, fs.ErrNotExist) {
		return refs, true
	}
	if err != nil {
		return nil, false
	}
	defer f.Close()
	// Each ref's line is shorter than its lines in the advertisement.
	if info, err := f.Stat(); err != nil || info.Size() > lim.bytes+4096 {
		return nil, false
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<10)
	sc.Split(packedLine)
	fully := false
	var last *localRef
	for first := true; sc.Scan(); first = false {
		line := sc.Bytes()
		switch {
		case first && bytes.HasPrefix(line, []byte("# pack-refs with:")):
			fully = bytes.Contains(line, []byte(" fully-peeled"))
		case len(line) > 0 && line[0] == '^':
			h, ok := hexHash(string(line[1:]))
			if !ok || last == nil {
				return nil, false
			}
			last.peeled, last.fullyPeeled = &h, true
			last = nil
		default:
			hs, name, ok := strings.Cut(string(line), " ")
			h, hok := hexHash(hs)
			if !ok || !hok || !refNameOK(name) || refs[name] != nil || len(refs) >= lim.refs {
				return nil, false // a comment past the first line too
			}
			last = &localRef{hash: h, fullyPeeled: fully}
			refs[name] = last
		}
	}
	return refs, sc.Err() == nil
}

// packedLine splits packed-refs at each newline, keeping a carriage
// return (part of the ref name to git, which refuses it) and failing on
// an unterminated last line, as git does.
func packedLine(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return 0, nil, errors.New("unterminated line in packed-refs")
	}
	return 0, nil, nil
}

// looseRefs reads the loose refs below dir/rel into refs, over packed
// ones.
func looseRefs(dir, rel string, refs map[string]*localRef, lim advertisementLimits) bool {
	entries, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		return false
	}
	for _, e := range entries {
		name := rel + "/" + e.Name()
		switch {
		case strings.HasSuffix(name, ".lock"):
			return false // a ref being written
		case !refNameOK(name):
			return false // git skips it, or calls it broken
		case e.IsDir():
			if !looseRefs(dir, name, refs, lim) {
				return false
			}
		case e.Type()&fs.ModeType == 0:
			b, err := readRegular(filepath.Join(dir, filepath.FromSlash(name)), maxRefFile, false)
			if err != nil {
				return false
			}
			// git trims the end only: leading space makes a broken ref.
			h, ok := hexHash(strings.TrimRightFunc(string(b), unicode.IsSpace))
			if !ok {
				return false // a symbolic ref, a lock, a broken ref: git's to answer
			}
			if refs[name] == nil && len(refs) >= lim.refs {
				return false
			}
			refs[name] = &localRef{hash: h}
		default:
			return false
		}
	}
	return true
}

// keepRegular returns f when it is open on a regular file, else closes it.
func keepRegular(f *os.File, name string) (*os.File, error) {
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file", name)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
