package daemon

import (
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillsync/skillsync/internal/metrics"
)

// The names of the daemon's metrics, as /metrics exposes them (a few of
// the process's besides: metrics.Process). docs/grafana-dashboard.json uses them.
const (
	MetricSyncRuns          = "skillsync_sync_runs_total"
	MetricSyncDuration      = "skillsync_sync_duration_seconds"
	MetricSourceLastSuccess = "skillsync_source_last_success_timestamp_seconds"
	MetricSourceRevision    = "skillsync_source_revision_info"
	MetricSourceFetchTime   = "skillsync_source_fetch_duration_seconds"
	MetricSourceFetchBytes  = "skillsync_source_fetch_bytes_total"
	MetricSkills            = "skillsync_skills"
	MetricFilesWritten      = "skillsync_files_written_total"
	MetricBytesWritten      = "skillsync_bytes_written_total"
	MetricTargetConflicts   = "skillsync_target_conflicts_total"
	MetricCurateChanges     = "skillsync_curate_changes_total"
	MetricUsageRecords      = "skillsync_usage_records_total"
	MetricFleetPush         = "skillsync_fleet_push_total"
)

// JobFleetPush is the name a fleet push job takes (Config.Jobs): its
// runs are counted in skillsync_fleet_push_total and shown by status.
const JobFleetPush = "fleet push"

// The values of the result label.
const (
	resultSuccess = "success"
	resultPartial = "partial"
	resultFailure = "failure"
)

// monitor keeps the daemon's metrics and State up to date from the jobs'
// results. Counters are kept as they go (internal/metrics); what describes the sources now
// is a State snapshot swapped in whole after each job, so a scrape or a
// readiness check reads the last one and never waits for a job.
type monitor struct {
	reg *metrics.Registry
	log *slog.Logger
	now func() time.Time

	syncRuns      *metrics.CounterVec
	syncDuration  *metrics.Histogram
	fetchBytes    *metrics.CounterVec
	filesWritten  *metrics.Counter
	bytesWritten  *metrics.Counter
	conflicts     *metrics.CounterVec
	curateChanges *metrics.CounterVec
	usageRecords  *metrics.CounterVec
	fleetPush     *metrics.CounterVec

	mu        sync.Mutex // serializes the writers of state
	state     atomic.Pointer[State]
	stateFile string   // "" writes none
	targets   []string // the config's, whose series a reload that drops one deletes
}

func newMonitor(log *slog.Logger) *monitor {
	m := &monitor{reg: &metrics.Registry{}, log: log, now: time.Now}
	m.syncRuns = m.reg.Counter(MetricSyncRuns, "Syncs run by the daemon, by result (success, partial, failure).", "result")
	m.syncDuration = m.reg.Histogram(MetricSyncDuration, "How long a sync took.",
		[]float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300})
	m.fetchBytes = m.reg.Counter(MetricSourceFetchBytes, "Bytes of skills a source's syncs brought into the cache.", "source")
	m.filesWritten = m.reg.Counter(MetricFilesWritten, "Files syncs wrote into the cache.").With()
	m.bytesWritten = m.reg.Counter(MetricBytesWritten, "Bytes syncs wrote into the cache.").With()
	m.conflicts = m.reg.Counter(MetricTargetConflicts, "Skills a target could not take as they were because of a user's own copy, moved aside or left in place.", "target")
	m.curateChanges = m.reg.Counter(MetricCurateChanges, "Copies curation moved, by the state they went to.", "to")
	m.usageRecords = m.reg.Counter(MetricUsageRecords, "Usage records imported from the agents, by kind (use, view).", "kind")
	m.fleetPush = m.reg.Counter(MetricFleetPush, "Fleet pushes, by result (success, failure).", "result")
	m.reg.Gather(m.sourceGauges)
	m.reg.Gather(metrics.Process(m.now()))
	// Every series with a fixed set of label values exists from the start.
	for _, r := range []string{resultSuccess, resultPartial, resultFailure} {
		m.syncRuns.With(r)
	}
	for _, r := range []string{resultSuccess, resultFailure} {
		m.fleetPush.With(r)
	}
	for _, to := range []string{"active", "stale", "archived"} {
		m.curateChanges.With(to)
	}
	for _, k := range []string{"use", "view"} {
		m.usageRecords.With(k)
	}
	m.state.Store(&State{PID: os.Getpid(), StartedAt: m.now().UTC(), Sources: map[string]SourceState{}})
	return m
}

// Snapshot returns the current State; it is never changed.
func (m *monitor) Snapshot() *State { return m.state.Load() }

// update applies change to a copy of the state and publishes it.
func (m *monitor) update(change func(*State)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	next := m.state.Load().clone()
	change(next)
	next.UpdatedAt = m.now().UTC()
	m.state.Store(next)
	if m.stateFile != "" {
		if err := writeState(m.stateFile, next); err != nil {
			m.log.Warn("cannot write the daemon's state; skillsync status will not see it", "error", err.Error())
		}
	}
}

// writeStateTo makes path the state file the monitor writes ("" for
// none), and writes the state there now.
func (m *monitor) writeStateTo(path string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stateFile = path
	if path != "" {
		if err := writeState(path, m.state.Load()); err != nil {
			m.log.Warn("cannot write the daemon's state; skillsync status will not see it", "error", err.Error())
		}
	}
}

// configured takes a new engine's settings: its sources and targets (one
// gone from the config leaves the metrics, and a source readiness too),
// its sync interval and its next curation.
func (m *monitor) configured(st Settings) {
	m.update(func(s *State) {
		next := make(map[string]SourceState, len(st.Sources))
		for _, name := range st.Sources {
			next[name] = s.Sources[name]
		}
		for name := range s.Sources {
			if _, ok := next[name]; !ok {
				m.fetchBytes.Delete(name)
			}
		}
		s.Sources = next
		for _, name := range st.Sources {
			m.fetchBytes.With(name)
		}
		for _, t := range m.targets {
			if !slices.Contains(st.Targets, t) {
				m.conflicts.Delete(t)
			}
		}
		m.targets = slices.Clone(st.Targets)
		for _, t := range st.Targets {
			m.conflicts.With(t)
		}
		s.SyncEvery, s.SyncSchedule = Seconds(Interval(st.Sync).Seconds()), st.Sync
		s.NextCurate = NextRun(st.Curate, m.now())
	})
}

// synced records a sync of the sources of req (all when req names none).
// A sync that failed as a whole (no result, or its Err) is a failure, and
// stamps no source's success, but for targets refused (Refused): the
// daemon is not ready until one passes.
func (m *monitor) synced(req SyncRequest, res *SyncResult, err error, took time.Duration) {
	m.syncDuration.Observe(took.Seconds())
	whole := ""
	switch {
	case res == nil && err != nil:
		whole = err.Error()
	case res != nil:
		whole = res.Err
	}
	switch {
	case res == nil || whole != "" || (err != nil && res.Failed() == len(res.Sources)):
		m.syncRuns.With(resultFailure).Inc()
	case err != nil || res.Failed() > 0:
		m.syncRuns.With(resultPartial).Inc()
	default:
		m.syncRuns.With(resultSuccess).Inc()
	}
	if res == nil {
		m.update(func(s *State) { s.LastSyncError = whole })
		return
	}
	m.filesWritten.Add(float64(res.FilesWritten))
	m.bytesWritten.Add(float64(res.BytesWritten))
	for _, t := range slices.Sorted(maps.Keys(res.Conflicts)) {
		m.conflicts.With(t).Add(float64(res.Conflicts[t]))
	}
	now := m.now().UTC()
	m.update(func(s *State) {
		s.CacheDirty, s.LastSyncError = res.CacheDirty, whole
		if whole == "" {
			s.LastSync = &now
		}
		for _, r := range res.Sources {
			prev, ok := s.Sources[r.Name]
			if !ok || (len(req.Only) > 0 && !slices.Contains(req.Only, r.Name)) {
				continue // a source not of this config, or left at its locked revision
			}
			m.fetchBytes.With(r.Name).Add(float64(r.FetchBytes))
			next := SourceState{Revision: r.Revision, LastAttempt: &now, LastSuccess: prev.LastSuccess, LastError: r.Err, Partial: r.Partial,
				FetchSeconds: Seconds(r.FetchDuration.Seconds()), Skills: r.Skills}
			next.Moved = prev.Revision != "" && r.Revision != prev.Revision
			if r.Err == "" && (whole == "" || res.Refused) {
				next.LastSuccess = &now
			} else if next.Revision == "" {
				next.Revision = prev.Revision
			}
			s.Sources[r.Name] = next
		}
	})
}

// curated records a curation: a failed one is no run, and says why.
func (m *monitor) curated(res *CurateResult, err error, next *time.Time) {
	if res != nil {
		for _, to := range slices.Sorted(maps.Keys(res.Changes)) {
			m.curateChanges.With(to).Add(float64(res.Changes[to]))
		}
	}
	now := m.now().UTC()
	m.update(func(s *State) {
		s.NextCurate, s.LastCurateError = next, ""
		if err != nil {
			s.LastCurateError = err.Error()
			return
		}
		s.LastCurate = &now
	})
}

// imported records an import: a failed one is no run, and says why.
func (m *monitor) imported(results []ImportResult, err error) {
	for _, r := range results {
		m.usageRecords.With("use").Add(float64(r.Uses))
		m.usageRecords.With("view").Add(float64(r.Views))
	}
	now := m.now().UTC()
	m.update(func(s *State) {
		s.LastImportError = ""
		if err != nil {
			s.LastImportError = err.Error()
			return
		}
		s.LastImport = &now
	})
}

// reloaded records how the last reload went: err is why it failed, nil
// when it took.
func (m *monitor) reloaded(err error) {
	m.update(func(s *State) {
		s.ReloadError = ""
		if err != nil {
			s.ReloadError = err.Error()
		}
	})
}

// pushed records a fleet push.
func (m *monitor) pushed(err error) {
	js := &JobState{At: m.now().UTC()}
	if err != nil {
		js.Error = err.Error()
		m.fleetPush.With(resultFailure).Inc()
	} else {
		m.fleetPush.With(resultSuccess).Inc()
	}
	m.update(func(s *State) { s.FleetPush = js })
}

// sourceGauges exposes the per-source gauges from the state snapshot:
// one series per source (its revision a label of a series that replaces
// the last), and none for a source gone from the config.
func (m *monitor) sourceGauges(g *metrics.Gauges) {
	const (
		helpLastSuccess = "When the source last synced without an error, as a Unix time."
		helpRevision    = "The revision the source is at; always 1."
		helpFetchTime   = "How long the source's last fetch took."
		helpSkills      = "The source's skills, by curation state (active, stale, archived)."
	)
	source, sourceState, sourceRevision := []string{"source"}, []string{"source", "state"}, []string{"source", "revision"}
	g.Describe(MetricSourceLastSuccess, helpLastSuccess, source...)
	g.Describe(MetricSourceRevision, helpRevision, sourceRevision...)
	g.Describe(MetricSourceFetchTime, helpFetchTime, source...)
	g.Describe(MetricSkills, helpSkills, sourceState...)
	st := m.Snapshot()
	for _, name := range slices.Sorted(maps.Keys(st.Sources)) {
		s := st.Sources[name]
		if s.LastSuccess != nil {
			g.Add(MetricSourceLastSuccess, helpLastSuccess, source, []string{name}, float64(s.LastSuccess.UnixNano())/1e9)
		}
		if s.Revision != "" {
			g.Add(MetricSourceRevision, helpRevision, sourceRevision, []string{name, s.Revision}, 1)
		}
		if s.LastAttempt != nil {
			g.Add(MetricSourceFetchTime, helpFetchTime, source, []string{name}, float64(s.FetchSeconds))
		}
		for _, state := range slices.Sorted(maps.Keys(s.Skills)) {
			g.Add(MetricSkills, helpSkills, sourceState, []string{name, state}, float64(s.Skills[state]))
		}
	}
}

// Interval is the time between two runs of a schedule: between its next
// two times from now. 0 for "" (only triggered) or a spec that does not
// parse.
func Interval(spec string) time.Duration {
	if spec == "" {
		return 0
	}
	s, err := parser().Parse(spec)
	if err != nil {
		return 0
	}
	a := s.Next(time.Now())
	return s.Next(a).Sub(a)
}

// NextRun is when spec next fires after now; nil for "" or a spec that
// does not parse.
func NextRun(spec string, now time.Time) *time.Time {
	if spec == "" {
		return nil
	}
	s, err := parser().Parse(spec)
	if err != nil {
		return nil
	}
	// A schedule is in local time, as the daemon runs it.
	t := s.Next(now.Local()).UTC()
	return &t
}
