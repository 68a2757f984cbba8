package skillsync

import (
	"context"

	"github.com/skillsync/skillsync/catalog"
	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/layering"
)

// Use records that a catalog skill was used (or, with view, looked at)
// now, through skillsync use.
func (e *Engine) Use(ctx context.Context, name string, view bool) (string, error) {
	return e.UseFrom(ctx, name, view, curator.FromCLI)
}

// UseFrom records a use (or a view) of the copy of name that wins now,
// saying where it came from (catalog.Workspace.Use). A stale copy becomes
// active at once. A hidden skill is refused.
func (e *Engine) UseFrom(ctx context.Context, name string, view bool, from curator.Source) (string, error) {
	return e.view().Use(ctx, name, curator.Use{View: view, From: from, At: e.now(), Actor: e.actor})
}

// Pin keeps a skill as it is through every curation; unpinned, it is
// curated again.
func (e *Engine) Pin(ctx context.Context, name string, pinned bool) (string, error) {
	return e.view().Pin(ctx, name, pinned, e.actor, e.now())
}

// Record records a use (or, with view, a view) of the catalog skill name
// from an MCP client; it is what a long-running server calls per request.
func (e *Engine) Record(ctx context.Context, name string, view bool) error {
	_, err := e.UseFrom(ctx, name, view, curator.FromMCP)
	return err
}

// Usage returns the workspace's usage store. A version-1 usage file is
// migrated to the copies that win now (catalog.Workspace.Usage).
func (e *Engine) Usage() *curator.Store { return e.view().Usage() }

// CopyOf names the copy an entry's usage is kept under, as curation and
// usage recording name it; ok is false for a name the curator cannot key.
func (e *Engine) CopyOf(en *layering.Entry) (curator.Copy, bool) { return e.copyOf(en) }

func (e *Engine) copyOf(en *layering.Entry) (curator.Copy, bool) {
	return catalog.CopyOf(en, e.cfg.User)
}

// resolverFrom maps a bare name of a version-1 usage file to the copy that
// wins it in cat.
func (e *Engine) resolverFrom(cat *layering.Catalog) func(string) (curator.Copy, bool) {
	return e.view().ResolverFrom(cat)
}
