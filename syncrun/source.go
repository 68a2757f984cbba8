package syncrun

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/lock"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// Run is what one sync holds while it goes through its sources.
type Run struct {
	// Cache is the cache, locked for this sync.
	Cache *materialize.Cache
	// Usage is the curator's state: archived copies stay out of the
	// cache.
	Usage *curator.Usage
	// Lock is skillsync.lock as the sync read it.
	Lock *lock.File
	// Frozen, set for a sync --frozen, gathers the skills whose content
	// differs from Lock's.
	Frozen *lock.FrozenError
	// Report is what the sync did so far.
	Report *Report
	// archived holds, by source and name, the skill hash of each skill
	// this machine archived that the sync read: the lock keeps them.
	archived map[string]map[string]string
}

// Materialize writes one source's skills into the cache at the revision
// rep names, unless the cache already holds exactly that (the source's
// revision, fingerprint and discovery key as src has them): it discovers
// them in repo, keeps the first of two with one name, leaves archived
// ones out, and has the cache write what changed. src names the source
// and its keys; Materialize fills in the rest. selects is the source's
// selection (repository.Options.Selects), nil for every skill.
func (r *Run) Materialize(ctx context.Context, repo repository.Repository, src materialize.Source, rep SourceReport, selects func(skill.Skill) bool) SourceReport {
	name := src.Name
	if l, ok := repo.(interface{ LeftOut() string }); ok {
		rep.LeftOut = l.LeftOut() // what its Sync's listings left out
	}
	rec := r.Cache.Manifest().Sources[name]
	archived := r.Usage.ArchivedIn(layering.Marketplace, name)
	src.Excluded = rec.ExcludedOf(archived)
	if r.Frozen == nil && r.Cache.Current(src) {
		rep.Skills, rep.Archived = len(rec.Skills), len(src.Excluded)
		return rep
	}
	skills, problems, err := repo.Skills(ctx)
	r.Report.AddProblems(problems)
	if err != nil {
		return r.Failed(rep, err)
	}
	rep.Skipped, rep.OverSize = Skipped(problems)
	if materialize.Cut(problems) {
		rep.Skipped++
	}
	unique, dups := layering.Dedupe(skills)
	r.Report.AddDuplicates(name, dups)
	// What the read could not tell is gone keeps its copy; an archived
	// skill stays out of the cache, read or not.
	var heldArchived []string
	for _, held := range materialize.Held(rec, unique, problems, selects) {
		if archived[held] {
			heldArchived = append(heldArchived, held)
		} else {
			src.Held = append(src.Held, held)
		}
	}
	unknown := len(src.Held)
	for _, kept := range r.keepInvalid(rec, src, unique, problems, selects) {
		switch {
		case slices.Contains(src.Held, kept) || slices.Contains(heldArchived, kept):
		case archived[kept]:
			heldArchived = append(heldArchived, kept)
		default:
			src.Held = append(src.Held, kept)
		}
	}
	if len(src.Held) > 0 {
		// A copy found in place of a held one is not built over it (nor
		// beside it, its name differing in case).
		unique = slices.DeleteFunc(unique, func(sk skill.Skill) bool {
			return slices.ContainsFunc(src.Held, func(held string) bool { return layering.Key(held) == layering.Key(sk.Name) })
		})
	}
	if unknown > 0 {
		r.Report.Warnings = append(r.Report.Warnings, fmt.Sprintf("source %s: kept the last synced copies of %s (%d): this read could not tell whether the source still has them; the problems of the source say why",
			name, heldList(src.Held[:unknown]), unknown))
	}
	if rep.Skipped == 0 {
		// A folder that could not be read is a warning, unless it held
		// skills the cache keeps: then the source is partly synced.
		rep.Skipped = unknown
	}
	// A skill kept at its last good copy, its new version invalid, is not
	// brought either, whatever else the read skipped.
	rep.Skipped += len(src.Held) - unknown
	if rep.Skipped > 0 {
		// Not all of the revision is here: the next sync looks again, and
		// says so again.
		src.Revision = ""
	}
	// Dedupe's slice is this sync's own: the archived are taken out in
	// place rather than copying thousands of skills.
	kept := unique[:0]
	var left []string
	for _, sk := range unique {
		if archived[sk.Name] {
			left = append(left, sk.Name)
			r.lockArchived(ctx, name, sk)
			continue
		}
		kept = append(kept, sk)
	}
	// An archived skill the read did not reach stays archived, and locked.
	left = append(left, heldArchived...)
	if r.Frozen != nil {
		src.Check = lock.FrozenCheck(name, r.Lock.Sources[name], &r.Frozen.Diff)
	}
	src.Skills, src.Excluded = materialize.FromSkills(kept, repository.GuessesModes(repo)), left
	rep.Archived = len(left)
	_, known := r.Cache.Manifest().Sources[name]
	res := r.Cache.SyncSource(ctx, src)
	r.Report.add(res, func(skill string) bool {
		rec := r.Cache.Manifest().Sources[name]
		return rec != nil && rec.Skills[skill] != nil
	})
	rep.Unwritten = unwritten(res.Errors)
	rep.Skills = len(r.Cache.Manifest().Sources[name].Skills)
	rep.Brought = r.Cache.Manifest().Sources[name].Brought(res.Changes)
	// A source's first sync is an update, even one that changed no skill.
	if _, now := r.Cache.Manifest().Sources[name]; len(res.Changes) > 0 || (!known && now) {
		rep.Status = StatusUpdated
	}
	if Unwritable(res.Errors) || rep.Skipped > 0 {
		rep.Status = StatusPartial
	}
	if r.Frozen != nil && r.frozenUnchecked(name, archived, src.Held, src.Held[unknown:], problems) > 0 {
		rep.Status = StatusPartial
	}
	return rep
}

// keepInvalid names, sorted, the skills of the source the cache keeps at
// their last good copies because the read found their new versions
// invalid (materialize.Invalidated), each with a warning that names the
// skill, its file and the problem. It is asked again by every sync (a
// source that keeps one is partial, so the next sync reads it again)
// until the skill is fixed upstream or gone. Only while the source's
// settings are as they were when the copy was made: a config that now
// refuses the skill (strict turned on, a lower max_skill_size) has it
// removed, as it asks.
func (r *Run) keepInvalid(rec *materialize.SourceRecord, src materialize.Source, found []skill.Skill, problems []skill.Problem, selects func(skill.Skill) bool) []string {
	if rec == nil || rec.Fingerprint != src.Fingerprint {
		return nil
	}
	invalid := materialize.Invalidated(rec, found, problems, selects)
	names := slices.Sorted(maps.Keys(invalid))
	for _, name := range names {
		r.Report.Warnings = append(r.Report.Warnings, fmt.Sprintf("source %s: skill %s keeps its last good copy, its new version being invalid (fix it upstream): %s",
			src.Name, name, invalid[name]))
	}
	return names
}

// frozenUnchecked adds to the frozen diff what of the source the lock has
// and the skills' own checks did not compare: a locked skill the cache
// does not hold after this sync (one this machine archived aside), a
// copy kept from an earlier sync (held) and an archived skill's hash that
// differ from the lock. A sync --frozen must fail rather than pass what
// it did not check. kept are the held skills whose versions at this
// revision are invalid (keepInvalid). A locked skill the read found
// invalid, of which this machine has no copy to keep, is no mismatch: the
// machine that wrote the lock kept its last good copy, which no read of
// this revision gives. It is a warning, and counts in what is returned:
// the source is partial, as it is there.
func (r *Run) frozenUnchecked(name string, archived map[string]bool, held, kept []string, problems []skill.Problem) (invalid int) {
	locked, ok := r.Lock.Sources[name]
	if !ok {
		return 0
	}
	var have map[string]*materialize.SkillRecord
	if rec := r.Cache.Manifest().Sources[name]; rec != nil {
		have = rec.Skills
	}
	refused := func(skill string) bool {
		prefix := fmt.Sprintf("~ skill %s/%s:", name, skill)
		return slices.ContainsFunc(r.Frozen.Diff, func(line string) bool { return strings.HasPrefix(line, prefix) })
	}
	why := func(skill string) string {
		if slices.Contains(kept, skill) {
			return "its version at this revision is invalid"
		}
		return "this read could not tell"
	}
	for _, skill := range held {
		if _, ok := locked.Skills[skill]; !ok {
			r.Frozen.Diff = append(r.Frozen.Diff, fmt.Sprintf("+ skill %s/%s, a copy kept from an earlier sync (%s), is not in the lock", name, skill, why(skill)))
		}
	}
	for _, skill := range slices.Sorted(maps.Keys(locked.Skills)) {
		want, cached := locked.Skills[skill], have[skill]
		switch read, ok := r.archived[name][skill]; {
		case archived[skill]:
			if ok && read != want {
				r.Frozen.Diff = append(r.Frozen.Diff, fmt.Sprintf("~ skill %s/%s (archived here): lock has %s, the source's hashes to %s", name, skill, shortHash(want), shortHash(read)))
			}
		case cached == nil && !refused(skill):
			if p, bad := materialize.InvalidNamed(problems, skill); bad {
				r.Report.Warnings = append(r.Report.Warnings, fmt.Sprintf("source %s: skill %s is in the lock, and invalid at the locked revision, with no earlier copy here to keep (the lock has the copy another sync kept): %s", name, skill, p))
				invalid++
				continue
			}
			r.Frozen.Diff = append(r.Frozen.Diff, fmt.Sprintf("- skill %s/%s is in the lock, and this sync did not bring it (its errors and warnings say why)", name, skill))
		case cached != nil && slices.Contains(held, skill) && cached.Hash.String() != want:
			r.Frozen.Diff = append(r.Frozen.Diff, fmt.Sprintf("~ skill %s/%s: lock has %s, the copy kept from an earlier sync (%s) hashes to %s", name, skill, shortHash(want), why(skill), cached.Hash.Short()))
		}
	}
	return invalid
}

// shortHash is a hash cut to the 12 characters messages show.
func shortHash(h string) string { return h[:min(len(h), 12)] }

// lockArchived hashes sk, a skill of source this machine archived, for
// the lock: the team's lock has it whatever this machine's curation did.
// One that cannot be hashed is left out of the lock, as before.
func (r *Run) lockArchived(ctx context.Context, source string, sk skill.Skill) {
	hash, err := materialize.SkillHash(ctx, sk.Files, sk.FileList())
	if err != nil {
		return
	}
	if r.archived == nil {
		r.archived = map[string]map[string]string{}
	}
	if r.archived[source] == nil {
		r.archived[source] = map[string]string{}
	}
	r.archived[source][sk.Name] = hash.String()
}

// Failed reports a source that could not be synced, with the revision and
// the skills it keeps from the last good sync.
func (r *Run) Failed(rep SourceReport, err error) SourceReport {
	rep.Status, rep.Error, rep.Revision, rep.Skills = StatusFailed, err.Error(), "", 0
	if rec, ok := r.Cache.Manifest().Sources[rep.Source]; ok {
		rep.Revision, rep.Skills = rec.Revision, len(rec.Skills)
	}
	return rep
}

// Revision is the revision the source is to be materialized at: what its
// fetch found (fetch not nil), else what the source says. A fetch that
// failed gives its error, and no revision, but where the cache holds
// none of the source's files (removed by hand) and its local copy is at
// the revision the lock has: that revision, so that the source is built
// again from the local copy while the remote is out of reach. The
// source still counts as failed (Failed, with the error).
func (r *Run) Revision(ctx context.Context, source string, fetch *Pending, repo repository.Repository) (repository.Revision, error) {
	if fetch == nil {
		return repo.Sync(ctx)
	}
	fetched := fetch.Wait()
	r.Report.Warnings = append(r.Report.Warnings, fetched.Warnings...)
	if fetched.Err == nil {
		return repository.Revision(fetched.Revision), nil
	}
	locked := r.Lock.Sources[source]
	if rec := r.Cache.Manifest().Sources[source]; rec != nil && len(rec.Skills) > 0 ||
		locked == nil || locked.Revision == "" || fetched.Revision != locked.Revision {
		return "", fetched.Err
	}
	return repository.Revision(fetched.Revision), fmt.Errorf("%w; its files were built again from the local copy, at the revision skillsync.lock has", fetched.Err)
}

// UsageRead is the curator's state being read beside a sync's other
// reads (ReadUsage); Run.LoadUsage takes what it read.
type UsageRead struct {
	done  chan struct{}
	usage *curator.Usage
	err   error
	// panicked is what the read panicked with, raised again by LoadUsage
	// on the sync's own goroutine: a daemon recovers it there.
	panicked any
}

// ReadUsage starts reading the curator's state from store, beside the
// lock and the sources' fetches: it needs only the cache's lock, which
// the sync holds by then. Wait waits for it.
func ReadUsage(store *curator.Store) *UsageRead {
	read := &UsageRead{done: make(chan struct{})}
	go func() {
		defer close(read.done)
		defer func() { read.panicked = recover() }()
		read.usage, read.err = store.Load()
	}()
	return read
}

// Wait waits for the read to end, for a sync that stops before it takes
// what was read.
func (read *UsageRead) Wait() { <-read.done }

// LoadUsage takes the curator's state read. The usage file is a side
// input: one that does not parse is set aside with a warning and nothing
// is left out as archived this time; only a usage file that cannot be
// used at all (a directory, a link, a newer version) stops the sync.
func (r *Run) LoadUsage(read *UsageRead) (*curator.Usage, error) {
	read.Wait()
	if read.panicked != nil {
		panic(read.panicked)
	}
	u, err := read.usage, read.err
	if curator.IsCorrupt(err) {
		r.Report.Warnings = append(r.Report.Warnings, fmt.Sprintf("%v; no skill is left out as archived this time", err))
		return u, nil
	}
	var unusable *curator.UnusableError
	if errors.As(err, &unusable) {
		// Said as the sync's own stop: it says which skills are archived,
		// and a sync that went on without it would put them back.
		return nil, fmt.Errorf("%w; the sync stopped before it changed anything, since the usage file says which skills are archived", err)
	}
	return u, err
}

// heldList names up to ten held skills, and how many more there are.
func heldList(names []string) string {
	const most = 10
	if len(names) <= most {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:most], ", "), len(names)-most)
}

// Unplaced names the skills the lock has of each source that failed this
// sync with nothing in the cache to give (the cache removed by hand, the
// remote out of reach): the targets keep their copies of them as they
// are, rather than lose what agents read until the source is back.
func (r *Run) Unplaced() []string {
	var names []string
	for _, s := range r.Report.Sources {
		if s.Status != StatusFailed {
			continue
		}
		if rec := r.Cache.Manifest().Sources[s.Source]; rec != nil && len(rec.Skills) > 0 {
			continue // its last good files are there, and placed from there
		}
		if locked, ok := r.Lock.Sources[s.Source]; ok && locked != nil {
			for name := range locked.Skills {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return names
}
