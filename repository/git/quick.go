package git

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
)

// quickObjects answers, for a fetch that finds the wanted commit already
// in the store (a no-op sync), whether a commit and its tree are there
// and what an annotated tag names, from the packs' indexes read in place:
// the fan-out, then one read of the part of the names table it points to.
// go-git decodes every index whole at its first object read, which cost
// every no-op sync of the medium benchmark corpus (a 900 KB index) 10 ms,
// O(objects in the store).
//
// Only a yes is trusted: a commit it cannot find or read (a loose
// object, a delta, an index of another version, a damaged store) is asked
// of go-git, as before, so what the store's checks find is unchanged.
type quickObjects struct {
	packs []*quickPack
}

// quickPack is one pack and its index, both open; the index is read in
// place (see packIdx).
type quickPack struct {
	idxFile, pack *os.File
	idx           *packIdx
	packSize      int64
}

// maxQuickPacks bounds the packs kept open (two files and a fan-out
// each): a file:// remote's objects/pack can hold any number.
const maxQuickPacks = 1024

// maxQuickObject bounds a commit or tag read here; a larger one is left to
// go-git.
const maxQuickObject = 1 << 20

// openQuickObjects opens the packs of store; a pack it cannot use is left
// out, so it never fails.
func openQuickObjects(store string) *quickObjects {
	q := &quickObjects{}
	dir := filepath.Join(store, "objects", "pack")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return q
	}
	for _, name := range packNames(entries) {
		if len(q.packs) == maxQuickPacks {
			break // the rest are go-git's to search
		}
		if p := openQuickPack(filepath.Join(dir, name)); p != nil {
			q.packs = append(q.packs, p)
		}
	}
	return q
}

func openQuickPack(pack string) *quickPack {
	// The packs of a file:// remote are another's: a FIFO or a device in
	// their place is not opened.
	f, err := openRegular(pack[:len(pack)-len(".pack")]+".idx", true)
	if err != nil {
		return nil
	}
	p := &quickPack{idxFile: f}
	info, err := f.Stat()
	if err == nil {
		p.idx, err = openIdx(f, info.Size())
	}
	if err == nil {
		if p.pack, err = openRegular(pack, true); err == nil {
			var pi os.FileInfo
			if pi, err = p.pack.Stat(); err == nil {
				p.packSize = pi.Size()
			}
		}
	}
	if err != nil {
		p.Close()
		return nil
	}
	return p
}

// Close closes the packs' files; q answers nothing after.
func (q *quickObjects) Close() {
	for _, p := range q.packs {
		p.Close()
	}
	q.packs = nil
}

func (p *quickPack) Close() {
	p.idxFile.Close()
	if p.pack != nil {
		p.pack.Close()
	}
}

// offset looks h up in the pack's index.
func (p *quickPack) offset(h plumbing.Hash) (int64, bool) {
	off, err := p.idx.FindOffset(h)
	if err != nil || off < packHeaderSize || off >= p.packSize {
		return 0, false
	}
	return off, true
}

// header reads the header of the object at off.
func (p *quickPack) header(off int64) (objectHeader, bool) {
	var buf [maxHeader]byte
	n, err := p.pack.ReadAt(buf[:], off)
	if err != nil && !(errors.Is(err, io.EOF) && n > 0) {
		return objectHeader{}, false
	}
	r := bytes.NewReader(buf[:n])
	h, err := readHeader(r, off)
	h.data = off + int64(n-r.Len())
	return h, err == nil
}

// find returns where h is stored and its header.
func (q *quickObjects) find(h plumbing.Hash) (*quickPack, objectHeader, bool) {
	for _, p := range q.packs {
		if off, ok := p.offset(h); ok {
			hd, ok := p.header(off)
			return p, hd, ok
		}
	}
	return nil, objectHeader{}, false
}

// read returns the content of h when it is stored whole (not as a delta)
// as an object of kind, inflating to the length its header says.
func (q *quickObjects) read(h plumbing.Hash, kind plumbing.ObjectType) ([]byte, bool) {
	p, hd, ok := q.find(h)
	if !ok || hd.kind != kind || hd.length > maxQuickObject {
		return nil, false
	}
	r, err := inflateAt(p.pack, p.packSize, hd.data, hd.length)
	if err != nil {
		return nil, false
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	return b, err == nil && int64(len(b)) == hd.length
}

// named reads the hash after prefix at the start of an object: a
// commit's "tree ", a tag's "object ".
func named(content []byte, prefix string) (plumbing.Hash, bool) {
	if len(content) < len(prefix)+40+1 || string(content[:len(prefix)]) != prefix || content[len(prefix)+40] != '\n' {
		return plumbing.ZeroHash, false
	}
	var h plumbing.Hash
	if _, err := hex.Decode(h[:], content[len(prefix):len(prefix)+40]); err != nil {
		return plumbing.ZeroHash, false
	}
	return h, true
}

// hasCommit reports yes when commit h and its tree are in the store's
// packs: the commit read whole, its tree's header read, and the tree read
// whole too when it is not stored as a delta. No means "ask go-git".
func (q *quickObjects) hasCommit(h plumbing.Hash) bool {
	c, ok := q.read(h, plumbing.CommitObject)
	if !ok {
		return false
	}
	tree, ok := named(c, "tree ")
	if !ok {
		return false
	}
	p, hd, ok := q.find(tree)
	if !ok {
		return false
	}
	switch hd.kind {
	case plumbing.TreeObject:
		_, ok := q.read(tree, plumbing.TreeObject)
		return ok
	case plumbing.OFSDeltaObject:
		return hd.base >= 12 && hd.base < p.packSize
	default:
		return false
	}
}

// peel follows annotated tags from h to what they name, reporting false
// where it cannot tell (then go-git is asked).
func (q *quickObjects) peel(h plumbing.Hash) (plumbing.Hash, bool) {
	for i := 0; i < 10; i++ {
		_, hd, ok := q.find(h)
		if !ok {
			return h, false
		}
		switch hd.kind {
		case plumbing.CommitObject:
			return h, true
		case plumbing.TagObject:
		default:
			return h, false
		}
		t, ok := q.read(h, plumbing.TagObject)
		if !ok {
			return h, false
		}
		if h, ok = named(t, "object "); !ok {
			return h, false
		}
	}
	return h, false
}
