package git

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

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
	head, err := os.ReadFile(filepath.Join(dir, "HEAD"))
	if err != nil {
		return nil, false
	}
	refs, ok := packedRefs(filepath.Join(dir, "packed-refs"))
	if !ok || !looseRefs(dir, "refs", refs) {
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
	switch s := strings.TrimSpace(string(head)); {
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
	default:
		h, ok := hexHash(s)
		if !ok {
			return nil, false
		}
		if _, _, ok := q.find(h); !ok {
			return nil, false
		}
		ar.Head = &h
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
// advertises: hidden refs, includes of other files, another ref format.
// A file that cannot be read counts as hiding when required.
func hidesRefs(config string, required bool) bool {
	b, err := os.ReadFile(config)
	if err != nil {
		return required || !os.IsNotExist(err)
	}
	s := strings.ToLower(string(b))
	for _, word := range []string{"hiderefs", "include", "refstorage", "worktreeconfig"} {
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

func hexHash(s string) (plumbing.Hash, bool) {
	var h plumbing.Hash
	if len(s) != 40 || !fullSHA.MatchString(s) {
		return h, false
	}
	_, err := hex.Decode(h[:], []byte(s))
	return h, err == nil
}

// packedRefs reads a packed-refs file; a missing one holds no ref.
func packedRefs(name string) (map[string]*localRef, bool) {
	refs := map[string]*localRef{}
	f, err := os.Open(name)
	if os.IsNotExist(err) {
		return refs, true
	}
	if err != nil {
		return nil, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<10)
	fully := false
	var last *localRef
	for first := true; sc.Scan(); first = false {
		line := sc.Bytes()
		switch {
		case first && bytes.HasPrefix(line, []byte("# pack-refs with:")):
			fully = bytes.Contains(line, []byte(" fully-peeled"))
		case len(line) > 0 && line[0] == '#':
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
			if !ok || !hok || !strings.HasPrefix(name, "refs/") {
				return nil, false
			}
			last = &localRef{hash: h, fullyPeeled: fully}
			refs[name] = last
		}
	}
	return refs, sc.Err() == nil
}

// looseRefs reads the loose refs below dir/rel into refs, over packed
// ones.
func looseRefs(dir, rel string, refs map[string]*localRef) bool {
	entries, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		return false
	}
	for _, e := range entries {
		name := rel + "/" + e.Name()
		switch {
		case strings.HasSuffix(name, ".lock"):
			return false // a ref being written
		case e.IsDir():
			if !looseRefs(dir, name, refs) {
				return false
			}
		case e.Type()&fs.ModeType == 0:
			b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
			if err != nil {
				return false
			}
			h, ok := hexHash(strings.TrimSpace(string(b)))
			if !ok {
				return false // a symbolic ref, a lock, a broken ref: git's to answer
			}
			refs[name] = &localRef{hash: h}
		default:
			return false
		}
	}
	return true
}
