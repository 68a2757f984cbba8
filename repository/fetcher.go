package repository

import (
	"context"
	"errors"
	"io"
	"io/fs"
)

// ErrNotFetched is returned by Skills for a git source whose wanted ref
// has never been fetched on this machine.
var ErrNotFetched = errors.New("not fetched yet: run skillsync fetch")

// FetchResult is what one fetch did.
type FetchResult struct {
	Revision Revision
	// Updated is set when the revision differs from the one fetched before.
	Updated bool
	// Warnings are things the fetch repaired on its way that a user may
	// want to know, such as a damaged store it rebuilt.
	Warnings []string
}

// Fetcher is a source whose local view is a copy of a remote, brought up
// to date by Fetch: a git source. A source read in place (a directory,
// an embedded file system) has nothing to fetch and is not a Fetcher.
type Fetcher interface {
	Repository
	// Fetch brings the local copy up to date with the remote and
	// returns the revision it now holds.
	Fetch(ctx context.Context) (FetchResult, error)
}

// Fetch fetches r when it is a Fetcher. Any other source has nothing to
// fetch: Fetch does nothing and returns a zero FetchResult.
func Fetch(ctx context.Context, r Repository) (FetchResult, error) {
	if f, ok := r.(Fetcher); ok {
		return f.Fetch(ctx)
	}
	return FetchResult{}, nil
}

// Close releases what an open source holds (a database's connections
// and spool, a git store's open packs) when it holds anything: such a
// source is an io.Closer. A nil r holds nothing.
func Close(r Repository) error {
	if c, ok := r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Currenter is a source that can tell, without the network, the revision
// its local copy holds: what the last fetch brought.
type Currenter interface {
	Repository
	// Current returns the revision of the local copy; ErrNotFetched when
	// there is none yet.
	Current(ctx context.Context) (Revision, error)
}

// Current returns the revision r holds locally, without the network. A
// source that is not a Currenter is read in place, and its Sync, which is
// local, gives its revision.
func Current(ctx context.Context, r Repository) (Revision, error) {
	if c, ok := r.(Currenter); ok {
		return c.Current(ctx)
	}
	return r.Sync(ctx)
}

// Upstreamer is a source that can tell the revision its remote holds now,
// cheaply: one listing of the remote's refs, nothing downloaded.
type Upstreamer interface {
	Repository
	// Upstream returns the revision the remote holds for the wanted ref.
	Upstream(ctx context.Context) (Revision, error)
}

// Upstream returns the revision r's remote holds now. A source that is
// not an Upstreamer has no remote: its upstream is what it holds, as
// Current says.
func Upstream(ctx context.Context, r Repository) (Revision, error) {
	if u, ok := r.(Upstreamer); ok {
		return u.Upstream(ctx)
	}
	return Current(ctx, r)
}

// Listener is a source that is told of its changes as they happen (a
// database that NOTIFYs): Listen calls changed with each new revision
// until ctx ends, reconnecting when the connection drops.
type Listener interface {
	Repository
	Listen(ctx context.Context, changed func(Revision)) error
}

// ModeGuesser is a source whose files carry no permission bits (an
// embed.FS): what it yields is written with modes guessed from the
// content (a script is executable).
type ModeGuesser interface {
	Repository
	GuessModes() bool
}

// GuessesModes reports whether r's files carry no permission bits (a file
// system compiled into the program), whose modes are then guessed.
func GuessesModes(r Repository) bool {
	g, ok := r.(ModeGuesser)
	return ok && g.GuessModes()
}

// ContentKeyFS is a file system that can name its content without reading
// it (a git tree by its hash): equal keys, equal files.
type ContentKeyFS interface {
	fs.FS
	ContentKey() string
}

// SameContentFS is a ContentKeyFS that can tell, without reading them,
// which of its files hold what they held in an earlier version of it,
// named by that version's content key (a git tree compares blob hashes).
// A sync then reads such a file from its own copy of that version.
type SameContentFS interface {
	ContentKeyFS
	SameContent(key, name string) bool
}

// SameContent reports whether the file at name in fsys holds what it held
// in the version of fsys whose content key is key; false when fsys cannot
// tell.
func SameContent(fsys fs.FS, key, name string) bool {
	s, ok := fsys.(SameContentFS)
	return ok && key != "" && s.SameContent(key, name)
}

// ContentKey returns fsys's content key, "" when it has none.
func ContentKey(fsys fs.FS) string {
	if k, ok := fsys.(ContentKeyFS); ok {
		return k.ContentKey()
	}
	return ""
}
