package skillsync

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// CacheDirName is the cache's directory in the workspace.
const CacheDirName = ".skills-cache"

// DefaultWait is how long a sync waits for another one to release the
// cache.
const DefaultWait = 30 * time.Second

// CacheDir returns the workspace's cache directory.
func (e *Engine) CacheDir() string { return filepath.Join(e.cfg.Workspace, CacheDirName) }

// SyncOptions change what a sync does.
type SyncOptions struct {
	// Frozen syncs exactly the revisions in skillsync.lock and fails when
	// the config or a skill's content disagrees with it.
	Frozen bool
	// Update, when not nil, moves only these sources to their newest
	// revision; the others stay at their locked revision.
	Update []string
	// Wait is how long to wait for another sync; 0 means DefaultWait.
	Wait time.Duration
	// Jobs is how many sources are fetched at once; 0 means DefaultJobs.
	Jobs int
	// Verify hashes every cached file instead of trusting stat data, and
	// rewrites whatever differs: skillsync verify --repair.
	Verify bool
	// Offline fetches nothing: git sources are materialized at the
	// revision their store already has. Curation and restore use it.
	Offline bool
}

// SourceReport is one source in a sync report.
type SourceReport struct {
	Source   string `json:"source"`
	Type     string `json:"type"`
	Revision string `json:"revision"`
	Status   string `json:"status"`
	Error    string `json:"error"`
	Skills   int    `json:"skills"`
}

// SkillChanges lists skills by what happened to them, as source/name.
type SkillChanges struct {
	Added   []string `json:"added"`
	Updated []string `json:"updated"`
	Removed []string `json:"removed"`
}

// ProblemReport is a problem as sync reports it.
type ProblemReport struct {
	Source  string      `json:"source"`
	Skill   string      `json:"skill"`
	Path    string      `json:"path"`
	Level   skill.Level `json:"level"`
	Rule    string      `json:"rule"`
	Message string      `json:"message"`
}

// SyncReport is what a sync did.
type SyncReport struct {
	Sources  []SourceReport             `json:"sources"`
	Skills   SkillChanges               `json:"skills"`
	Files    materialize.Stats          `json:"files"`
	Targets  []materialize.TargetReport `json:"targets"`
	Problems []ProblemReport            `json:"problems"`
	// Changes carries the hashes before and after, for the audit log.
	Changes []materialize.Change `json:"-"`
	// Warnings are things the user should know that changed nothing.
	Warnings []string `json:"-"`
}

// Failed counts the sources that failed.
func (r *SyncReport) Failed() int {
	n := 0
	for _, s := range r.Sources {
		if s.Status == StatusFailed {
			n++
		}
	}
	return n
}

// Sync is the main job: fetch the git sources, materialize every
// marketplace skill into the cache, refresh the targets, and write
// skillsync.lock. A source that fails keeps its last good files; the
// report says which failed. The error is for what stops the whole sync:
// a held cache lock, a frozen mismatch, a cache that cannot be written.
func (e *Engine) Sync(ctx context.Context, opts SyncOptions) (*SyncReport, error) {
	lock, hasLock, err := ReadLock(e.cfg.Workspace)
	if err != nil {
		return nil, err
	}
	var frozen *FrozenError
	if opts.Frozen {
		if !hasLock {
			return nil, &FrozenError{Diff: []string{"there is no " + LockFileName + " in " + e.cfg.Workspace + ": run skillsync sync once without --frozen"}}
		}
		if diff := lock.compareConfig(e.cfg); len(diff) > 0 {
			return nil, &FrozenError{Diff: diff}
		}
		frozen = &FrozenError{}
	}
	repos, err := e.pinnedRepositories(lock, opts)
	if err != nil {
		return nil, err
	}
	wait := opts.Wait
	if wait <= 0 {
		wait = DefaultWait
	}
	cache, err := materialize.OpenCache(ctx, e.CacheDir(), wait, opts.Verify)
	if err != nil {
		return nil, err
	}
	defer cache.Close()

	report := &SyncReport{Targets: []materialize.TargetReport{}, Problems: []ProblemReport{}}
	report.Warnings = append(report.Warnings, cache.OpenWarnings()...)
	usage, err := e.Usage().Load()
	if err != nil {
		return nil, err
	}
	fetched := e.fetchAll(ctx, repos, opts)
	for i, rc := range e.cfg.Repositories {
		src := e.syncSource(ctx, cache, rc, repos[i], fetched[i], lock, frozen, usage, report)
		report.Sources = append(report.Sources, src)
	}
	pruned := cache.Prune(e.sourceNames())
	report.Changes = append(report.Changes, pruned.Changes...)
	for _, err := range pruned.Errors {
		report.Warnings = append(report.Warnings, err.Error())
	}
	report.Warnings = append(report.Warnings, pruned.Warnings...)
	if err := cache.Commit(ctx); err != nil {
		return report, fmt.Errorf("write cache: %w", err)
	}
	report.Files = cache.Stats()
	if err := e.syncTargets(ctx, cache.Manifest(), opts.Verify, report); err != nil {
		return report, err
	}
	report.summarize()
	e.recordSync(ctx, cache.Manifest(), report)
	if frozen != nil && len(frozen.Diff) > 0 {
		return report, frozen
	}
	if err := e.newLock(cache.Manifest(), lock).write(e.cfg.Workspace); err != nil {
		return report, fmt.Errorf("write %s: %w", LockFileName, err)
	}
	return report, nil
}

// pinnedRepositories returns the repositories, with git sources pinned to
// their locked revision where the options say so.
func (e *Engine) pinnedRepositories(lock *Lock, opts SyncOptions) ([]repository.Repository, error) {
	repos, err := e.Repositories()
	if err != nil {
		return nil, err
	}
	for i, rc := range e.cfg.Repositories {
		locked, ok := lock.Sources[rc.Name]
		if rc.Type() != "git" || !ok || locked.Revision == "" {
			continue
		}
		if opts.Frozen || (opts.Update != nil && !slices.Contains(opts.Update, rc.Name)) {
			pinned := rc
			pinned.Ref = locked.Revision
			repos[i] = e.newGit(pinned)
		}
	}
	for _, name := range opts.Update {
		if !slices.Contains(e.sourceNames(), name) {
			return nil, fmt.Errorf("no source named %q in the config", name)
		}
	}
	return repos, nil
}

func (e *Engine) sourceNames() []string {
	names := make([]string, len(e.cfg.Repositories))
	for i, rc := range e.cfg.Repositories {
		names[i] = rc.Name
	}
	return names
}

// fetchAll fetches the git sources among repos concurrently; the result
// for a source that is not git is its zero value. Offline, each git
// source's result is the revision its store already has.
func (e *Engine) fetchAll(ctx context.Context, repos []repository.Repository, opts SyncOptions) []FetchResult {
	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = DefaultJobs
	}
	results := make([]FetchResult, len(repos))
	var g errgroup.Group
	g.SetLimit(jobs)
	for i, r := range repos {
		gr, ok := r.(*repository.Git)
		switch {
		case !ok:
		case opts.Offline:
			rev, err := gr.Current(ctx)
			results[i] = FetchResult{Source: gr.Source(), Revision: string(rev), Status: StatusUnchanged, Err: err}
			if err != nil {
				results[i].Status, results[i].Error = StatusFailed, err.Error()
			}
		default:
			g.Go(func() error {
				results[i] = fetchOne(ctx, gr)
				return nil
			})
		}
	}
	_ = g.Wait()
	return results
}

// syncSource materializes one source, or reports why it could not.
func (e *Engine) syncSource(ctx context.Context, cache *materialize.Cache, rc RepositoryConfig, r repository.Repository,
	fetched FetchResult, lock *Lock, frozen *FrozenError, usage *curator.Usage, report *SyncReport) SourceReport {
	src := SourceReport{Source: rc.Name, Type: rc.Type(), Status: StatusUnchanged}
	fail := func(err error) SourceReport {
		src.Status, src.Error = StatusFailed, err.Error()
		if rec, ok := cache.Manifest().Sources[rc.Name]; ok {
			src.Revision, src.Skills = rec.Revision, len(rec.Skills)
		}
		return src
	}
	var rev repository.Revision
	if rc.Type() == "git" {
		if fetched.Err != nil {
			return fail(fetched.Err)
		}
		rev = repository.Revision(fetched.Revision)
	} else {
		var err error
		if rev, err = r.Sync(ctx); err != nil {
			return fail(err)
		}
	}
	src.Revision = string(rev)
	excluded := archivedOf(usage)
	if frozen == nil && cache.Current(materialize.Source{Name: rc.Name, Revision: string(rev), Excluded: excludedIn(cache.Manifest().Sources[rc.Name], excluded)}) {
		src.Skills = len(cache.Manifest().Sources[rc.Name].Skills)
		return src
	}
	skills, problems, err := r.Skills(ctx)
	report.addProblems(problems)
	if err != nil {
		return fail(err)
	}
	var kept []skill.Skill
	var left []string
	for _, s := range dedupe(skills) {
		if excluded[s.Name] {
			left = append(left, s.Name)
			continue
		}
		kept = append(kept, s)
	}
	items := materialSkills(kept, rc.Type() == "embedded")
	var check func(name string, hash materialize.Hash) error
	if frozen != nil {
		check = frozenCheck(rc.Name, lock.Sources[rc.Name], frozen)
	}
	res := cache.SyncSource(ctx, materialize.Source{Name: rc.Name, Revision: string(rev), Skills: items, Excluded: left, Check: check})
	report.Changes = append(report.Changes, res.Changes...)
	src.Skills = len(cache.Manifest().Sources[rc.Name].Skills)
	if len(res.Changes) > 0 {
		src.Status = StatusUpdated
	}
	var refused *refusedError
	for _, err := range res.Errors {
		if !errors.As(err, &refused) {
			report.Warnings = append(report.Warnings, err.Error())
		}
	}
	report.Warnings = append(report.Warnings, res.Warnings...)
	return src
}

// archivedOf returns the names the curator archived.
func archivedOf(u *curator.Usage) map[string]bool {
	out := map[string]bool{}
	for name, s := range u.Skills {
		if s.State == curator.Archived {
			out[name] = true
		}
	}
	return out
}

// excludedIn returns which archived names the cached source would leave
// out, as the fast path compares them: the ones it now holds or left out
// before. A name archived that the source never had changes nothing.
func excludedIn(rec *materialize.SourceRecord, archived map[string]bool) []string {
	if rec == nil {
		return nil
	}
	var out []string
	for name := range archived {
		if _, cached := rec.Skills[name]; cached || slices.Contains(rec.Excluded, name) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// recordSync appends the sync's changes to the audit log and marks the
// first sighting of new skills. Neither may fail the sync: the files are
// already in place, so a failure is a warning.
func (e *Engine) recordSync(ctx context.Context, m *materialize.Manifest, report *SyncReport) {
	now := e.now()
	var events []curator.Event
	var names []string
	for _, c := range report.Changes {
		events = append(events, curator.Event{TS: now, Actor: e.actor(), Op: string(c.Op), Target: c.Source + "/" + c.Name,
			BeforeHash: c.Before.String(), AfterHash: c.After.String()})
	}
	for _, rec := range m.Sources {
		for name := range rec.Skills {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	if err := e.Audit().Append(events...); err != nil {
		report.Warnings = append(report.Warnings, err.Error())
	}
	if err := e.Usage().Seen(ctx, names, now); err != nil {
		report.Warnings = append(report.Warnings, err.Error())
	}
}

// refusedError is a skill a frozen sync would not write.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return e.msg }

// frozenCheck refuses a skill whose hash differs from the lock's, and
// records the difference.
func frozenCheck(source string, locked *LockSource, frozen *FrozenError) func(name string, hash materialize.Hash) error {
	return func(name string, hash materialize.Hash) error {
		want, ok := locked.Skills[name]
		switch {
		case !ok:
			frozen.Diff = append(frozen.Diff, fmt.Sprintf("+ skill %s/%s is not in the lock", source, name))
		case want != hash.String():
			frozen.Diff = append(frozen.Diff, fmt.Sprintf("~ skill %s/%s: lock has %s, content hashes to %s", source, name, short(want), hash.Short()))
		default:
			return nil
		}
		return &refusedError{msg: "refused by --frozen"}
	}
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// dedupe keeps one skill per case-insensitive name, the first by path, as
// the catalog does: two cache directories differing only by case would
// collide on some file systems.
func dedupe(skills []skill.Skill) []skill.Skill {
	sorted := slices.Clone(skills)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	seen := map[string]bool{}
	var out []skill.Skill
	for _, s := range sorted {
		if k := layering.Key(s.Name); !seen[k] {
			seen[k] = true
			out = append(out, s)
		}
	}
	return out
}

func materialSkills(skills []skill.Skill, guessModes bool) []materialize.Skill {
	out := make([]materialize.Skill, 0, len(skills))
	for _, s := range skills {
		m := materialize.Skill{Name: s.Name, Files: s.Files, List: s.FileList(), GuessModes: guessModes}
		if t, ok := s.Files.(interface{ TreeHash() string }); ok {
			m.Fingerprint = "git-tree:" + t.TreeHash()
		}
		out = append(out, m)
	}
	return out
}

func (r *SyncReport) addProblems(problems []skill.Problem) {
	for _, p := range problems {
		r.Problems = append(r.Problems, ProblemReport{Source: p.Source, Skill: p.Skill, Path: cmp.Or(p.File, p.Path), Level: p.Level, Rule: p.Rule, Message: p.Message})
	}
}

// summarize fills Skills from Changes, sorted.
func (r *SyncReport) summarize() {
	r.Skills = SkillChanges{Added: []string{}, Updated: []string{}, Removed: []string{}}
	for _, c := range r.Changes {
		name := c.Source + "/" + c.Name
		switch c.Op {
		case "added":
			r.Skills.Added = append(r.Skills.Added, name)
		case "updated":
			r.Skills.Updated = append(r.Skills.Updated, name)
		case "removed":
			r.Skills.Removed = append(r.Skills.Removed, name)
		}
	}
	sort.Strings(r.Skills.Added)
	sort.Strings(r.Skills.Updated)
	sort.Strings(r.Skills.Removed)
}

// newLock records the sources as the cache now holds them. A source that
// failed keeps what the old lock said.
func (e *Engine) newLock(m *materialize.Manifest, old *Lock) *Lock {
	l := &Lock{Version: 1, Sources: map[string]*LockSource{}}
	for _, rc := range e.cfg.Repositories {
		ls := lockSource(rc)
		rec, ok := m.Sources[rc.Name]
		if !ok || rec.Revision == "" {
			if prev, had := old.Sources[rc.Name]; had {
				l.Sources[rc.Name] = prev
			}
			continue
		}
		ls.Revision = rec.Revision
		for name, sk := range rec.Skills {
			ls.Skills[name] = sk.Hash.String()
		}
		l.Sources[rc.Name] = ls
	}
	return l
}

// syncTargets places every catalog winner in each target.
func (e *Engine) syncTargets(ctx context.Context, m *materialize.Manifest, verify bool, report *SyncReport) error {
	if len(e.cfg.Targets) == 0 {
		return nil
	}
	cat, err := e.catalogWith(ctx, m)
	if err != nil {
		return err
	}
	var skills []materialize.TargetSkill
	for _, w := range cat.Winners {
		if w.Hidden || w.State == layering.Archived {
			continue
		}
		ts := materialize.TargetSkill{
			Skill: materialize.Skill{Name: w.Skill.Name, Files: w.Skill.Files, List: w.Skill.FileList()},
			Dir:   w.Dir,
		}
		if w.Layer == layering.Marketplace && w.Dir != "" {
			if rec, ok := m.Sources[w.Source]; ok {
				if sk, ok := rec.Skills[w.Skill.Name]; ok {
					ts.Hash = sk.Hash
				}
			}
			if fsys, err := repository.NewDirFS(w.Dir); err == nil {
				ts.Files = fsys
			}
		}
		skills = append(skills, ts)
	}
	for _, t := range e.cfg.Targets {
		tr, err := materialize.SyncTarget(ctx, materialize.Target{Dir: t.Dir, Mode: materialize.TargetMode(t.Mode), Skills: skills, Verify: verify})
		if err != nil {
			return err
		}
		report.Warnings = append(report.Warnings, tr.Warnings...)
		report.Warnings = append(report.Warnings, tr.Errors...)
		for _, p := range tr.Preserved {
			report.Warnings = append(report.Warnings, "an edited copy was moved to "+p+" before the new version was written")
		}
		report.Targets = append(report.Targets, tr)
	}
	return nil
}
