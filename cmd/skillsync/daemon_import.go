package main

import (
	"context"
	"log/slog"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/daemon"
)

// importJob is the daemon's job "import": on spec (schedule.import) it
// imports every known agent's records of eng's workspace (Claude Code's
// transcripts), logging one line per agent. Run it before curation, so
// curation sees what agents did since the last import.
func importJob(eng *skillsync.Engine, spec string, log *slog.Logger) daemon.Job {
	return daemon.NewJob("import", spec, func(ctx context.Context) error {
		reports, err := eng.ImportAll(ctx)
		for _, r := range reports {
			for _, u := range r.Unreadable {
				log.Warn("import passed over a record; it is tried again next time", "agent", r.Agent, "error", u)
			}
			log.Info("imported", "agent", r.Agent, "files", r.Files, "uses", r.Uses, "views", r.Views,
				"unknown", r.Unknown, "malformed", r.Malformed, "too_long", r.TooLong, "reactivated", len(r.Reactivated))
		}
		return err
	})
}
