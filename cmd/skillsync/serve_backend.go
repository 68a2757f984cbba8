package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/fleet"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/serve"
	"github.com/skillsync/skillsync/status"
)

// serveBackend is what the web catalog reads of a workspace, through the
// Engine: every method only reads.
type serveBackend struct {
	live *liveEngine
}

var _ serve.Backend = serveBackend{}

func (b serveBackend) Catalog(ctx context.Context) (*layering.Catalog, error) {
	return b.live.get().Catalog(ctx)
}

func (b serveBackend) Usage(context.Context) (*curator.Usage, error) {
	return b.live.get().Usage().Load()
}

func (b serveBackend) CopyOf(w *layering.Winner) (curator.Copy, bool) {
	return b.live.get().CopyOf(&w.Entry)
}

// Open reads as the read command does; a skill the catalog does not offer
// is not found, for a 404.
func (b serveBackend) Open(ctx context.Context, name, file string) (fs.File, *layering.Winner, error) {
	f, w, err := b.live.get().Read(ctx, name, file)
	var unknown *skillsync.UnknownSkillError
	var hidden *skillsync.HiddenError
	switch {
	case errors.As(err, &unknown) || errors.As(err, &hidden):
		err = fmt.Errorf("%w (%w)", err, fs.ErrNotExist)
	case errors.Is(err, repository.ErrNotRegular):
		err = fmt.Errorf("%w (%w)", err, fs.ErrPermission)
	}
	return f, w, err
}

func (b serveBackend) Curation() serve.Policy {
	c := b.live.get().Config().Curator
	return serve.Policy{StaleAfter: c.StaleAfter, ArchiveAfter: c.ArchiveAfter}
}

// Status reads the sources' records, the daemon's state and the targets'
// folders: no source is asked anything over the network. When a source
// last synced, its last error and whether upstream had moved are weighed
// from the daemon's state and the syncs by hand exactly as skillsync
// status weighs them (status.Records).
func (b serveBackend) Status(ctx context.Context) (*serve.Status, error) {
	eng := b.live.get()
	cfg, ly := eng.Config(), eng.Layout()
	st := &serve.Status{Workspace: cfg.Workspace}
	m, err := materialize.ReadSkills(ly.CacheDir())
	if err != nil {
		return nil, err
	}
	// A record that cannot be read hides its view, not the sources: each
	// says why it lacks it.
	recs := status.ReadRecords(ctx, ly.CacheDir(), ly.DaemonFile(), ly.DaemonLockFile())
	for _, s := range cfg.Sources {
		ss := serve.SourceStatus{Name: s.Name, Kind: string(s.Kind)}
		if rec, ok := m.Sources[s.Name]; ok {
			ss.Revision, ss.Skills = rec.Revision, len(rec.Skills)
		} else {
			ss.LastError = "not synced yet: run skillsync sync"
		}
		h := recs.Source(s.Name)
		if h.SyncedAt != nil {
			ss.SyncedAt = *h.SyncedAt
		}
		ss.UpstreamMoved = h.Moved
		switch {
		case h.Error != "":
			ss.LastError = h.Error
		case ss.LastError == "" && len(recs.Problems) > 0:
			ss.LastError = strings.Join(recs.Problems, "; ")
		}
		st.Sources = append(st.Sources, ss)
	}
	for _, t := range cfg.Targets {
		ts := serve.TargetStatus{Dir: t.Dir}
		if entries, err := os.ReadDir(t.Dir); err == nil {
			for _, e := range entries {
				if e.IsDir() && e.Name()[0] != '.' {
					ts.Skills++
				}
			}
		}
		if entries, err := os.ReadDir(filepath.Join(t.Dir, materialize.ConflictsName)); err == nil {
			for _, e := range entries {
				ts.Conflicts = append(ts.Conflicts, e.Name())
			}
		}
		st.Targets = append(st.Targets, ts)
	}
	return st, nil
}

func (b serveBackend) Drafts(ctx context.Context) ([]serve.Draft, error) {
	list, err := b.live.get().Gate().List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]serve.Draft, 0, len(list))
	for _, d := range list {
		var diff bytes.Buffer
		against, err := b.live.get().Gate().Diff(ctx, &diff, d.Name)
		if err != nil {
			diff.WriteString(fmt.Sprintf("(no diff: %v)", err))
		}
		sd := serve.Draft{Name: d.Name, Description: d.Description, Against: against, Diff: diff.String(), ProposedAt: d.Created}
		for _, p := range d.Problems {
			sd.Problems = append(sd.Problems, p.String())
		}
		out = append(out, sd)
	}
	return out, nil
}

// Fleet is the hosts the fleet store knows, nil without a fleet: section
// (the page then says how to configure one).
func (b serveBackend) Fleet(ctx context.Context) (*serve.Fleet, error) {
	w, err := b.live.get().Fleet()
	if err != nil {
		return nil, nil
	}
	hosts, err := w.Status(ctx, fleet.StatusOptions{})
	if err != nil {
		return nil, err
	}
	out := &serve.Fleet{}
	for _, h := range hosts {
		sh := serve.Host{ID: h.Host, Environment: h.Environment, Version: h.Version, LastSeen: h.LastSeenAt}
		for _, s := range h.Sources {
			sh.Sources = append(sh.Sources, serve.HostSource{Source: s.Source, Revision: s.Revision, Status: s.Status, Error: s.Error, Behind: s.Behind})
		}
		out.Hosts = append(out.Hosts, sh)
	}
	return out, nil
}

func (b serveBackend) History(_ context.Context, w *layering.Winner, since time.Time) ([]serve.Day, error) {
	eng := b.live.get()
	c, ok := eng.CopyOf(&w.Entry)
	if !ok {
		return nil, nil
	}
	u, err := eng.Usage().Load()
	if err != nil {
		return nil, err
	}
	return serve.DaysOf(u.Skills[c], since), nil
}
