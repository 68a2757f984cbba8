package daemon

import (
	"context"
	"os"
	"time"

	"github.com/skillsync/skillsync/repository"
)

// Engine is what the daemon's jobs work on: a workspace over one loaded
// config. skillsync's Engine gives one (Engine.Daemon); the daemon opens a
// new one at every reload, while runs in progress finish on the old one.
type Engine interface {
	// Settings are the config's schedules and what to log about it.
	Settings() Settings
	// Sync brings the sources in and refreshes the targets. The result is
	// nil only when nothing was synced; a partial sync returns both.
	Sync(ctx context.Context, req SyncRequest) (*SyncResult, error)
	// Curate runs the curation policy once.
	Curate(ctx context.Context) (*CurateResult, error)
	// Import records what every known agent did since the last import.
	Import(ctx context.Context) ([]ImportResult, error)
	// PushSources names the sources that announce their changes as they
	// happen (a database that NOTIFYs).
	PushSources() []string
	// OpenListener opens a push source to listen to; lost receives a line
	// each time its connection drops. nil, nil: the source cannot listen.
	// A Listener that is an io.Closer is closed when listening ends.
	OpenListener(source string, lost func(msg string)) (repository.Listener, error)
	// CachedRevision is the revision of source the cache holds, "" when
	// none or unreadable.
	CachedRevision(source string) string
}

// Jobber is an Engine with jobs of its own besides the standard ones
// (Jobs): the daemon runs them too, over each engine it opens. A fleet
// push is one, named JobFleetPush so that its runs are counted and shown.
type Jobber interface {
	Engine
	MoreJobs() ([]Job, error)
}

// Settings are what the daemon needs of the config.
type Settings struct {
	// Sync, Curate and Import are cron expressions (see Job.Schedule);
	// "" runs the job only when triggered.
	Sync, Curate, Import string
	// StatCheckEvery: the first sync and every StatCheckEvery-th after it
	// compare stat data of every cached and target file (0: never).
	StatCheckEvery int
	// Listen is the address of the metrics and health server; "" serves
	// none unless the daemon's caller gives one.
	Listen string
	// Sources name every source of the config, in its order; Targets
	// every target as SyncResult.Conflicts does.
	Sources, Targets []string
	// StateFile is where the daemon writes its State for skillsync
	// status, and LockFile the lock it holds on the workspace while it
	// runs; "" writes and holds none.
	StateFile, LockFile string
	// Attrs are logged when the daemon starts or reloads (the config file).
	Attrs []any
	// ConfigFile is the config the engine was made from, "" for none (the
	// built-in default): while it is gone, no job runs.
	ConfigFile string
	// ConfigRead is ConfigFile's stat data as the engine read it (taken
	// from the opened file before the read), nil when the engine does not
	// say. The daemon reloads once the file differs from it: stat data
	// taken after the engine was made would take an edit landing between
	// the read and the stat for one already loaded, and the daemon would
	// run on the old config until the next edit. Without it the daemon
	// stats the file itself, before a reload reads it and, at start, once
	// the engine is made.
	ConfigRead os.FileInfo
}

// SyncRequest is one sync the daemon asks for.
type SyncRequest struct {
	// StatCheck compares stat data of every file instead of trusting records.
	StatCheck bool
	// Only names the sources to move to their newest revision; the others
	// stay at their locked ones. Empty: every source moves.
	Only []string
}

// SyncResult is what a sync did, as the daemon logs and counts it.
type SyncResult struct {
	Sources []SourceResult
	// Added, Updated, Removed and Repaired count skills.
	Added, Updated, Removed, Repaired int
	// FilesWritten and BytesWritten are what was written into the cache.
	FilesWritten int
	BytesWritten int64
	// Conflicts counts, per target, the user-edited copies moved aside.
	Conflicts map[string]int
	// Warnings are lines to log.
	Warnings []string
	// CacheDirty is set when the cache is left marked as a sync stopped
	// halfway.
	CacheDirty bool
	// Err is why the sync failed beyond what its sources say (a target,
	// the cache, a stop): then no source synced as it should have. ""
	// when the sources' own errors say it all.
	Err string
	// Refused is set when Err is of targets refused, left as they were:
	// a sync refuses one only after the cache and the lock took in the
	// sources, so each source without an Err of its own did sync.
	Refused bool
}

// Failed counts the sources that failed.
func (r *SyncResult) Failed() int {
	n := 0
	for _, s := range r.Sources {
		if s.Err != "" {
			n++
		}
	}
	return n
}

// SourceResult is how one source fared in a sync.
type SourceResult struct {
	Name, Revision string
	// Err says why the source failed; "" when it synced.
	Err string
	// Partial says why a source that synced was brought in part (skills
	// it could not read or write kept their last good copies, or none);
	// "" when it was brought whole.
	Partial string
	// FetchDuration is how long its fetch took (0 for a source read in
	// place); FetchBytes is how much of its content the sync brought into
	// the cache.
	FetchDuration time.Duration
	FetchBytes    int64
	// Skills counts its cached skills by curation state (active, stale,
	// archived).
	Skills map[string]int
}

// CurateResult is what a curation did.
type CurateResult struct {
	Checked int
	// Changes counts the copies that changed, by the state they went to.
	Changes map[string]int
	// Skipped and ArchiveHeld say why nothing was considered or archived.
	Skipped, ArchiveHeld string
}

// ChangeCount is the number of copies that changed state.
func (r *CurateResult) ChangeCount() int {
	n := 0
	for _, c := range r.Changes {
		n += c
	}
	return n
}

// ImportResult is what an import did for one agent.
type ImportResult struct {
	Agent                                           string
	Files, Uses, Views, Unknown, Malformed, TooLong int
	Reactivated                                     int
	// Unreadable records were passed over this time, with why.
	Unreadable []string
	// MalformedAt names the first malformed lines (a file and an offset).
	MalformedAt []string
}
