package git

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// A sync reads the commit and the trees it needs from the same packs its
// blobs come from (packedObjects), through the indexes it read once for
// the store's packs. go-git's object storage read every index of the
// store again, whole, the first time a sync looked up an object through
// it, and went through its own pack reader for each tree; a 1% sync of
// 2,000 skills reads some thousand trees. go-git stays the fallback for
// an object no pack holds (a loose one), and the storer of the objects
// decoded here, so what they look up themselves goes through it as before.

// readMeta returns the commit or tree h from the packs, its content
// checked against h; plumbing.ErrObjectNotFound when no pack holds it, or
// when it is larger than go-git would read whole either. The content is
// the packs' cache's own when it is there: never written to.
func (p *packedObjects) readMeta(h plumbing.Hash, want plumbing.ObjectType) (*metaObject, error) {
	if f, o, ok := p.spools.find(h); ok && !p.overBase(o) && !(p.maxBase > 0 && o.size > p.maxBase) {
		// Spooled as it was hashed to h: no need to hash it again.
		if o.typ != want {
			return nil, fmt.Errorf("object %s is a %s, not a %s", h, o.typ, want)
		}
		if o.size > maxMetaObject {
			return nil, plumbing.ErrObjectNotFound // go-git's to refuse or read
		}
		data, err := f.read(o)
		if err != nil {
			return nil, fmt.Errorf("object %s: %w", h, err)
		}
		return &metaObject{h: h, t: want, b: data}, nil
	}
	at, ok := p.find(h)
	if !ok {
		return nil, plumbing.ErrObjectNotFound
	}
	o, err := p.stat(at)
	if err != nil {
		return nil, err
	}
	typ, err := p.objectType(o)
	if err != nil {
		return nil, err
	}
	if typ != want {
		return nil, fmt.Errorf("object %s is a %s, not a %s", h, typ, want)
	}
	if o.size > maxMetaObject {
		return nil, plumbing.ErrObjectNotFound // go-git's to refuse or read
	}
	data, ok := p.cache.get(at)
	if !ok {
		r, release, err := p.content(at, 0)
		if err != nil {
			return nil, err
		}
		// content keeps what it built in memory; else it is read whole.
		if data, ok = p.cache.get(at); !ok {
			data = make([]byte, o.size)
			_, err = io.ReadFull(io.NewSectionReader(r, 0, o.size), data)
		}
		release()
		if err != nil {
			return nil, fmt.Errorf("object %s: %w", h, err)
		}
	}
	// A pack's checksum says it arrived whole, not that an object in it
	// is the one its index names.
	if int64(len(data)) != o.size || plumbing.ComputeHash(want, data) != h {
		return nil, fmt.Errorf("object %s: its content does not hash to its name", h)
	}
	return &metaObject{h: h, t: want, b: data}, nil
}

// metaObject is a commit or tree read whole, for go-git to decode
// without copying it.
type metaObject struct {
	h plumbing.Hash
	t plumbing.ObjectType
	b []byte
}

func (o *metaObject) Hash() plumbing.Hash            { return o.h }
func (o *metaObject) Type() plumbing.ObjectType      { return o.t }
func (o *metaObject) SetType(plumbing.ObjectType)    {}
func (o *metaObject) Size() int64                    { return int64(len(o.b)) }
func (o *metaObject) SetSize(int64)                  {}
func (o *metaObject) Reader() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(o.b)), nil }
func (o *metaObject) Writer() (io.WriteCloser, error) {
	return nil, errors.New("a packed object is read-only")
}

// tree returns the tree h from the packs, or from s when no pack holds
// it. The tree's own lookups go through s.
func (p *packedObjects) tree(s storer.EncodedObjectStorer, h plumbing.Hash) (*object.Tree, error) {
	if p != nil {
		mo, err := p.readMeta(h, plumbing.TreeObject)
		if err == nil {
			return object.DecodeTree(s, mo)
		}
		if !errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil, err
		}
	}
	return object.GetTree(s, h)
}

// commit returns the commit h from the packs, or from s when no pack
// holds it.
func (p *packedObjects) commit(s storer.EncodedObjectStorer, h plumbing.Hash) (*object.Commit, error) {
	if p != nil {
		mo, err := p.readMeta(h, plumbing.CommitObject)
		if err == nil {
			return object.DecodeCommit(s, mo)
		}
		if !errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil, err
		}
	}
	return object.GetCommit(s, h)
}
