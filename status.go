package skillsync

import (
	"context"

	"github.com/skillsync/skillsync/lock"
	"github.com/skillsync/skillsync/status"
)

// The workspace's state on one screen, as package status assembles it.
type (
	WorkspaceStatus = status.Workspace
	SourceStatus    = status.Source
	TargetStatus    = status.Target
	UsageStatus     = status.Usage
	CurationStatus  = status.Curation
	DaemonStatus    = status.Daemon
)

// StatusOptions configure Status.
type StatusOptions struct {
	// Check asks each source's upstream whether it moved (a ref listing
	// for git), as skillsync outdated does, instead of trusting the
	// daemon's last sync.
	Check bool
}

// Status assembles the workspace's state; it changes nothing.
func (e *Engine) Status(ctx context.Context, opts StatusOptions) (*WorkspaceStatus, error) {
	in := status.Input{Root: e.layout.Root, Config: e.cfg.File, CacheDir: e.layout.CacheDir(), DaemonFile: e.layout.DaemonFile(),
		DaemonLockFile: e.layout.DaemonLockFile(), Targets: e.targetDirs(), CurateSchedule: e.cfg.Schedule.Curate, Now: e.now(),
		Usage: e.Usage().Load, Drafts: func(ctx context.Context) (int, error) { d, err := e.Gate().List(ctx); return len(d), err },
		Lock: func() error { _, _, err := lock.Read(e.layout.LockFile(), e.kinds); return err }, Refusals: e.places(SyncOptions{}).Refusals}
	for _, s := range e.cfg.Sources {
		in.Sources = append(in.Sources, status.Source{Name: s.Name, Kind: string(s.Kind)})
	}
	if opts.Check {
		in.Check = func(ctx context.Context) ([]status.Check, error) {
			out, err := e.Outdated(ctx)
			checks := make([]status.Check, len(out))
			for i, o := range out {
				checks[i] = status.Check{Behind: o.Behind, Error: o.Error}
			}
			return checks, err
		}
	}
	return status.Build(ctx, in)
}
