package serve

import (
	"container/list"
	"crypto/sha256"
	"sync"

	"golang.org/x/sync/singleflight"
)

// maxBodies is how many bytes of rendered bodies a server keeps: some
// hundreds of skills' pages (a typical body renders to some 10 KiB; the
// largest maxMarkdown allows, to under 1 MiB).
const maxBodies = 8 << 20

// bodies keeps the bodies a server rendered, so that a page viewed again
// (or a page another site's <img> asks for again and again) is not
// rendered again, and renders each once however many views of it come
// at a time. The least recently viewed go first past max bytes.
type bodies struct {
	max int
	// render renders a body: renderBody; tests count and hold it.
	render func(md, base string) rendered
	group  singleflight.Group

	mu     sync.Mutex
	bytes  int
	recent *list.List // of *bodyEntry, the most recently viewed first
	byKey  map[string]*list.Element
}

type bodyEntry struct {
	key string
	r   rendered
}

// size is what an entry holds, roughly: its key, its HTML and note, and
// the list's and map's bookkeeping.
func (e *bodyEntry) size() int { return len(e.key) + len(e.r.HTML) + len(e.r.Note) + 128 }

func newBodies(limit int) *bodies {
	return &bodies{max: limit, render: renderBody, recent: list.New(), byKey: map[string]*list.Element{}}
}

// bodyKey is what a body's rendering depends on: the Markdown and the
// base its relative links resolve against (the rest, the renderer and
// its bounds, is the binary's). base holds no NUL (it is escaped).
func bodyKey(md, base string) string {
	h := sha256.New()
	h.Write([]byte(base))
	h.Write([]byte{0})
	h.Write([]byte(md))
	return string(h.Sum(nil))
}

// get is the body of md rendered against base, as renderBody renders
// it: kept, or rendered once for all who ask at the same time.
func (b *bodies) get(md, base string) rendered {
	key := bodyKey(md, base)
	if r, ok := b.lookup(key); ok {
		return r
	}
	v, _, _ := b.group.Do(key, func() (any, error) {
		// Another flight may have kept it since the lookup.
		if r, ok := b.lookup(key); ok {
			return r, nil
		}
		r := b.render(md, base)
		b.keep(key, r)
		return r, nil
	})
	return v.(rendered)
}

func (b *bodies) lookup(key string) (rendered, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	el, ok := b.byKey[key]
	if !ok {
		return rendered{}, false
	}
	b.recent.MoveToFront(el)
	return el.Value.(*bodyEntry).r, true
}

// keep adds an entry, and lets the least recently viewed go past max.
func (b *bodies) keep(key string, r rendered) {
	e := &bodyEntry{key: key, r: r}
	if e.size() > b.max {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.byKey[key]; ok {
		return
	}
	b.byKey[key] = b.recent.PushFront(e)
	b.bytes += e.size()
	for b.bytes > b.max {
		old := b.recent.Back()
		b.recent.Remove(old)
		delete(b.byKey, old.Value.(*bodyEntry).key)
		b.bytes -= old.Value.(*bodyEntry).size()
	}
}
