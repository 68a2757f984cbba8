// Package curator keeps the usage of skills in .usage.json, per copy,
// decides from it which copies are stale or archived, moves archived local
// skills into their layer's .archive/ and back, and appends every change
// to the audit log. It never fetches.
package curator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/skillsync/skillsync/workspace"

	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/internal/flock"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/skill"
)

// UsageFile is the usage store's name inside the workspace's skills/.
const UsageFile = workspace.UsageName

// UsageVersion is the format Store writes: records keyed by Copy.
const UsageVersion = 2

// maxUsageSize bounds what Load reads; a usage file this large was not
// written by skillsync and is treated as corrupt.
const maxUsageSize = 64 << 20

// Usage is the content of .usage.json.
type Usage struct {
	Version int                  `json:"version"`
	Skills  map[Copy]*SkillUsage `json:"skills"`
	Curator CuratorState         `json:"curator"`
	// Imports are, per agent, the id of the last import whose uses this
	// file holds: written with them, in one step, so that an import that
	// stopped before saving how far it read is told from one that stopped
	// before recording (agent.Journal.Import).
	Imports map[string]string `json:"imports,omitempty"`
	// from is the version the file had on disk when read; Update migrates
	// a version-1 file.
	from int
}

// SkillUsage is what is known of one copy of a skill.
type SkillUsage struct {
	UseCount     int        `json:"use_count"`
	ViewCount    int        `json:"view_count"`
	FirstSeenAt  *time.Time `json:"first_seen_at,omitempty"`
	LastUsedAt   *time.Time `json:"last_used_at,omitempty"`
	LastViewedAt *time.Time `json:"last_viewed_at,omitempty"`
	// LastSource is where the latest use or view came from.
	LastSource Source     `json:"last_source,omitempty"`
	State      State      `json:"state"`
	StateSince *time.Time `json:"state_since,omitempty"`
	Pinned     bool       `json:"pinned"`
	// Days counts uses and views per UTC day (DayLayout), for the last
	// KeepDays days: what a chart of use over time is drawn from.
	Days map[string]DayCount `json:"days,omitempty"`
}

// DayCount is one day's uses and views of a copy.
type DayCount struct {
	Uses  int `json:"uses,omitempty"`
	Views int `json:"views,omitempty"`
}

// DayLayout is the format of the keys of SkillUsage.Days.
const DayLayout = "2006-01-02"

// KeepDays is how many days of SkillUsage.Days are kept: twelve weeks.
const KeepDays = 84

// count adds a use or a view at t to the day buckets and drops the days
// older than KeepDays, and any key that is not a day, so the record stays
// small whatever the file held.
func (s *SkillUsage) count(t time.Time, view bool) {
	s.prune(t)
	s.add(t, view)
}

// prune drops the days older than KeepDays before t, and any that is not
// a day.
func (s *SkillUsage) prune(t time.Time) {
	oldest := t.UTC().AddDate(0, 0, -KeepDays+1).Format(DayLayout)
	for day := range s.Days {
		if _, err := time.Parse(DayLayout, day); err != nil || day < oldest {
			delete(s.Days, day)
		}
	}
}

// add counts a use (or a view) at t on its day.
func (s *SkillUsage) add(t time.Time, view bool) {
	if s.Days == nil {
		s.Days = map[string]DayCount{}
	}
	day := t.UTC().Format(DayLayout)
	c := s.Days[day]
	if view {
		c.Views = addCount(c.Views, 1)
	} else {
		c.Uses = addCount(c.Uses, 1)
	}
	s.Days[day] = c
}

// addCount is a + b for two counts that are not negative (checkCounts
// refuses a file with one that is), held at the largest int: wrapped
// round, a count read as valid would be written negative, and the next
// reader would set the whole file aside as corrupt.
func addCount(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// CuratorState records the last curation.
type CuratorState struct {
	LastRunAt   *time.Time `json:"last_run_at,omitempty"`
	LastSummary string     `json:"last_summary,omitempty"`
}

// LastActive is the latest of the last use, the last view and the first
// sighting: the moment idle time counts from.
func (s *SkillUsage) LastActive() time.Time {
	var t time.Time
	for _, p := range []*time.Time{s.LastUsedAt, s.LastViewedAt, s.FirstSeenAt} {
		if p != nil && p.After(t) {
			t = *p
		}
	}
	return t
}

// used reports whether a use or a view was ever recorded.
func (s *SkillUsage) used() bool {
	return s.UseCount > 0 || s.ViewCount > 0 || s.LastUsedAt != nil || s.LastViewedAt != nil
}

// StateOf returns the copy's state, active when nothing is recorded.
func (u *Usage) StateOf(c Copy) State {
	if s, ok := u.Skills[c]; ok && s.State != "" {
		return s.State
	}
	return Active
}

// Skill returns the record of c, creating an active one.
func (u *Usage) Skill(c Copy) *SkillUsage {
	s, ok := u.Skills[c]
	if !ok {
		s = &SkillUsage{State: Active}
		u.Skills[c] = s
	}
	return s
}

// SetState records a state change at now.
func (u *Usage) SetState(c Copy, state State, now time.Time) {
	s := u.Skill(c)
	s.State = state
	s.StateSince = stamp(now)
}

// EverUsed reports whether any use or view was ever recorded in the
// workspace. Until one is, curation archives nothing: a workspace whose
// agents never report usage must not lose its skills.
func (u *Usage) EverUsed() bool {
	for _, s := range u.Skills {
		if s.used() {
			return true
		}
	}
	return false
}

// ArchivedIn returns the names of the archived copies of one layer and
// owner: for the marketplace layer, what a source's materialization
// leaves out.
func (u *Usage) ArchivedIn(layer layering.Layer, owner string) map[string]bool {
	out := map[string]bool{}
	for c, s := range u.Skills {
		if c.Layer == layer && c.Owner == owner && s.State == Archived {
			out[c.Name] = true
		}
	}
	return out
}

// Archived returns the archived copies whose name is name, compared as
// the catalog compares names, in key order.
func (u *Usage) Archived(name string) []Copy {
	key := layering.Key(name)
	var out []Copy
	for c, s := range u.Skills {
		if s.State == Archived && layering.Key(c.Name) == key {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func newUsage() *Usage {
	return &Usage{Version: UsageVersion, Skills: map[Copy]*SkillUsage{}, from: UsageVersion}
}

// stamp is a time as every record keeps it: UTC, whole seconds.
func stamp(t time.Time) *time.Time {
	t = t.UTC().Truncate(time.Second)
	return &t
}

// Store is the usage file of one workspace. Writers take an exclusive
// lock, read, change, write a temporary file, fsync and rename, so no
// reader sees a partial file and no increment is lost.
type Store struct {
	path  string
	audit *Audit
	// Warn receives warnings, such as a corrupt file set aside or an audit
	// line that could not be written.
	Warn func(string)
	// Resolve maps a bare name of a version-1 file to the copy that wins it
	// now. Load uses it to read such a file, and the first Update migrates
	// the file to version 2 with it; names it does not resolve are left
	// out (they stay in .usage.json.v1). It is called with the store's lock
	// held, so it must not use the store. Without it a version-1 file reads
	// as empty and Update refuses to migrate it.
	Resolve func(name string) (Copy, bool)
}

// NewStore returns the store of the workspace whose skills directory is
// skillsDir; its audit lines go to that directory's audit log.
func NewStore(skillsDir string) *Store {
	return &Store{path: filepath.Join(skillsDir, UsageFile), audit: NewAudit(skillsDir), Warn: func(string) {}}
}

// Path returns the usage file's path.
func (s *Store) Path() string { return s.path }

// CorruptError is a usage file that does not parse, is too large, or
// holds a record that fails validation (a key that is not a safe copy
// name, an unknown state). It is a warning: Load returns it together with
// an empty usage, so the caller shows it and goes on; the next Update sets
// the file aside and starts a fresh one.
type CorruptError struct {
	Path string
	Err  error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("usage file %s is corrupt: %v", e.Path, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// IsCorrupt reports whether err is a CorruptError: a warning the caller
// can show while it goes on.
func IsCorrupt(err error) bool {
	var ce *CorruptError
	return errors.As(err, &ce)
}

// UnusableError is a usage path skillsync will neither read nor replace:
// a directory, a symbolic link, a device, a file of a newer format or one
// it may not read. The user has to act; the error names the path.
type UnusableError struct {
	Path   string
	Reason string
	Err    error
}

func (e *UnusableError) Error() string {
	msg := fmt.Sprintf("usage file %s %s", e.Path, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *UnusableError) Unwrap() error { return e.Err }

// Load reads the usage without locking and without writing. A missing
// file reads as empty. A corrupt one reads as empty together with a
// *CorruptError (a warning); a path that cannot be used gives a nil usage
// and an *UnusableError naming it. A version-1 file is read through
// Resolve.
func (s *Store) Load() (*Usage, error) {
	u, err := s.read()
	if IsCorrupt(err) {
		return newUsage(), err
	}
	return u, err
}

// read opens the usage file without following a symbolic link and checks
// it is a regular file before reading it.
func (s *Store) read() (*Usage, error) {
	data, err := atomicfile.ReadBounded(s.path, maxUsageSize)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return newUsage(), nil
	case errors.Is(err, atomicfile.ErrSymlink):
		return nil, &UnusableError{Path: s.path, Reason: "is a symbolic link; skillsync does not follow links in the workspace, replace it with a file or remove it"}
	case errors.Is(err, atomicfile.ErrTooLarge):
		return nil, &CorruptError{Path: s.path, Err: fmt.Errorf("larger than %d bytes", maxUsageSize)}
	case errors.Is(err, atomicfile.ErrNotRegular):
		reason := "is not a regular file; move it away"
		if info, lerr := os.Lstat(s.path); lerr == nil && info.IsDir() {
			reason = "is a directory, not a file; move it away"
		}
		return nil, &UnusableError{Path: s.path, Reason: reason}
	case err != nil:
		return nil, &UnusableError{Path: s.path, Reason: "cannot be read", Err: err}
	}
	return s.decode(data)
}

// decode reads either version. Every key is validated: a v2 key as a
// Copy, a v1 key as one safe name. A version-2 file as Store writes it is
// read by fastDecode (usage_decode.go); anything it is not sure of goes to
// decodeJSON, which gives the same result more slowly and is the only one
// to report errors.
func (s *Store) decode(data []byte) (*Usage, error) {
	if u, ok := fastDecode(data); ok {
		return s.checkCounts(finishV2(u))
	}
	return s.decodeJSON(data)
}

// checkCounts returns u, or refuses it when it counts fewer than no uses
// or views: a count is only ever added to, so one below zero was written
// by hand or torn, and every use after would carry it on.
func (s *Store) checkCounts(u *Usage) (*Usage, error) {
	for c, r := range u.Skills {
		if r.negative() {
			return nil, s.negativeError(c.String())
		}
	}
	return u, nil
}

func (s *Store) negativeError(record string) error {
	return &CorruptError{Path: s.path, Err: fmt.Errorf("record %s counts fewer than no uses or views", record)}
}

// negative reports whether r counts fewer than no uses or views.
func (r *SkillUsage) negative() bool {
	bad := r.UseCount < 0 || r.ViewCount < 0
	for _, d := range r.Days {
		bad = bad || d.Uses < 0 || d.Views < 0
	}
	return bad
}

// finishV2 completes a decoded version-2 usage: no nil map, no nil record.
func finishV2(u *Usage) *Usage {
	if u.Skills == nil {
		u.Skills = map[Copy]*SkillUsage{}
	}
	for c, r := range u.Skills {
		if r == nil {
			delete(u.Skills, c)
		}
	}
	return u
}

// decodeJSON decodes with encoding/json. The file is decoded as version 2
// at once, as it nearly always is; only when that fails, or the version it
// names is another, is the version read on its own to tell why.
func (s *Store) decodeJSON(data []byte) (*Usage, error) {
	u := newUsage()
	u.Version = 0 // a file that names no version is version 1
	err := json.Unmarshal(data, u)
	if err == nil && u.Version == UsageVersion {
		return s.checkCounts(finishV2(u))
	}
	var head struct {
		Version int `json:"version"`
	}
	if herr := json.Unmarshal(data, &head); herr != nil {
		return nil, &CorruptError{Path: s.path, Err: herr}
	}
	switch {
	case head.Version > UsageVersion:
		return nil, &UnusableError{Path: s.path, Reason: fmt.Sprintf("is version %d, newer than this skillsync reads (%d); upgrade skillsync", head.Version, UsageVersion)}
	case head.Version < UsageVersion:
		return s.decodeV1(data)
	}
	return nil, &CorruptError{Path: s.path, Err: err}
}

// usageV1 is the version-1 format: records keyed by bare skill name.
type usageV1 struct {
	Skills  map[string]*SkillUsage `json:"skills"`
	Curator CuratorState           `json:"curator"`
}

// decodeV1 reads a version-1 file into version 2: each name's record goes
// to the copy Resolve says wins it now.
func (s *Store) decodeV1(data []byte) (*Usage, error) {
	var old usageV1
	if err := json.Unmarshal(data, &old); err != nil {
		return nil, &CorruptError{Path: s.path, Err: err}
	}
	names := make([]string, 0, len(old.Skills))
	for name, r := range old.Skills {
		if !skill.ValidName(name) {
			return nil, &CorruptError{Path: s.path, Err: fmt.Errorf("version-1 record %q is not one safe name", name)}
		}
		if r != nil && r.negative() {
			return nil, s.negativeError(strconv.Quote(name))
		}
		if r != nil {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	u := newUsage()
	u.from = 1
	u.Curator = old.Curator
	if s.Resolve == nil {
		return u, nil
	}
	for _, name := range names {
		c, ok := s.Resolve(name)
		if !ok || c.Validate() != nil {
			continue
		}
		if have, ok := u.Skills[c]; ok {
			merge(have, old.Skills[name])
		} else {
			u.Skills[c] = old.Skills[name]
		}
	}
	return u, nil
}

// merge folds record b into a, for two version-1 names (differing in
// case) that resolve to one copy: counts add up, the latest times win,
// and the copy is pinned or archived if either was.
func merge(a, b *SkillUsage) {
	a.UseCount = addCount(a.UseCount, b.UseCount)
	a.ViewCount = addCount(a.ViewCount, b.ViewCount)
	if b.FirstSeenAt != nil && (a.FirstSeenAt == nil || b.FirstSeenAt.Before(*a.FirstSeenAt)) {
		a.FirstSeenAt = b.FirstSeenAt
	}
	if later(b.LastUsedAt, a.LastUsedAt) {
		a.LastUsedAt = b.LastUsedAt
		if b.LastSource != "" {
			a.LastSource = b.LastSource
		}
	}
	if later(b.LastViewedAt, a.LastViewedAt) {
		a.LastViewedAt = b.LastViewedAt
	}
	if rank(b.State) > rank(a.State) {
		a.State, a.StateSince = b.State, b.StateSince
	}
	a.Pinned = a.Pinned || b.Pinned
}

func later(a, b *time.Time) bool { return a != nil && (b == nil || a.After(*b)) }

func rank(s State) int {
	return map[State]int{Active: 0, Stale: 1, Archived: 2}[s]
}

// lockWait bounds how long a writer waits for another; writers hold the
// lock for a read and a write of a small file.
const lockWait = 2 * time.Minute

// Update changes the usage under the lock. A file that does not parse is
// kept as .usage.json.corrupt-<UTC stamp>, a warning says so, and fn
// starts from an empty usage. A version-1 file is migrated: kept once as
// .usage.json.v1 and replaced by version 2. A path that cannot be used
// (a directory, a symbolic link) is refused with an *UnusableError and
// nothing is written.
func (s *Store) Update(ctx context.Context, fn func(*Usage) error) error {
	if err := ownDir(filepath.Dir(s.path)); err != nil {
		return fmt.Errorf("usage file %s: %w", s.path, err)
	}
	lock, err := flock.Acquire(ctx, s.path+".lock", lockWait)
	if err != nil {
		return fmt.Errorf("lock %s: %w", s.path, err)
	}
	defer lock.Close()
	u, err := s.read()
	var ce *CorruptError
	if errors.As(err, &ce) {
		backup, rerr := s.setAside(".corrupt-")
		if rerr != nil {
			return fmt.Errorf("set aside corrupt %s: %w", s.path, rerr)
		}
		s.Warn(fmt.Sprintf("%s did not parse (%v); kept it as %s and started a fresh one", s.path, ce.Err, backup))
		u, err = newUsage(), nil
	}
	if err != nil {
		return err
	}
	if u.from < UsageVersion {
		if s.Resolve == nil {
			return &UnusableError{Path: s.path, Reason: "is version 1 and this store has no Resolve to migrate it"}
		}
		if err := s.keepV1(); err != nil {
			return err
		}
	}
	if err := fn(u); err != nil {
		return err
	}
	u.Version = UsageVersion
	data, err := encodeUsage(u)
	if err != nil {
		return fmt.Errorf("encode %s: %w", s.path, err)
	}
	return atomicfile.WriteFile(s.path, data, 0o644)
}

// keepV1 keeps the version-1 file once as .usage.json.v1, by a hard link
// to the file the migration is about to replace: the link never follows a
// symbolic link, and an existing .v1 is left as it is.
func (s *Store) keepV1() error {
	err := os.Link(s.path, s.path+".v1")
	if err == nil {
		s.Warn(fmt.Sprintf("%s was version 1; migrated it to version 2 and kept the old one as %s.v1", s.path, s.path))
		return nil
	}
	if errors.Is(err, fs.ErrExist) || errors.Is(err, fs.ErrNotExist) {
		return nil // kept before, or there was no file to keep
	}
	return fmt.Errorf("keep %s as %s.v1: %w", s.path, s.path, err)
}

// setAside renames the usage file to <path><infix><UTC stamp>, never over
// an existing file, and returns the new name.
func (s *Store) setAside(infix string) (string, error) {
	base := s.path + infix + time.Now().UTC().Format("20060102T150405Z")
	name := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			break
		}
		name = fmt.Sprintf("%s-%d", base, i)
	}
	return name, os.Rename(s.path, name)
}

// Use is one recorded use or view of a copy.
type Use struct {
	Copy Copy
	// View records a view (an agent looked at the skill) instead of a use.
	View bool
	// From is where the use came from.
	From Source
	At   time.Time
	// Actor names who used it, for the audit line a reactivation writes.
	Actor string
}

// Record counts a use (or a view) of a copy. A stale copy becomes active
// at once, without waiting for the next curation; Record then appends a
// reactivated line to the audit log and reports true. A failed audit
// line is a warning: the use is counted.
func (s *Store) Record(ctx context.Context, use Use) (reactivated bool, err error) {
	if err := use.Copy.Validate(); err != nil {
		return false, err
	}
	if !use.From.valid() {
		return false, fmt.Errorf("record a use of %s: source %q is not one of cli, mcp, hook, import", use.Copy, use.From)
	}
	err = s.Update(ctx, func(u *Usage) error {
		sk := u.Skill(use.Copy)
		if sk.FirstSeenAt == nil {
			sk.FirstSeenAt = stamp(use.At)
		}
		if use.View {
			sk.ViewCount = addCount(sk.ViewCount, 1)
			sk.LastViewedAt = stamp(use.At)
		} else {
			sk.UseCount = addCount(sk.UseCount, 1)
			sk.LastUsedAt = stamp(use.At)
		}
		sk.count(use.At, use.View)
		sk.LastSource = use.From
		if sk.State == Stale {
			u.SetState(use.Copy, Active, use.At)
			reactivated = true
		}
		return nil
	})
	if err != nil || !reactivated {
		return reactivated, err
	}
	kind := map[bool]string{true: "viewed", false: "used"}[use.View]
	ev := Event{TS: use.At, Actor: use.Actor, Op: OpReactivated, Target: use.Copy.String(), From: string(Stale), To: string(Active),
		Detail: kind + " through " + string(use.From)}
	if aerr := s.audit.Append(ev); aerr != nil {
		s.Warn(fmt.Sprintf("reactivated %s but could not write the audit line: %v", use.Copy, aerr))
	}
	return true, nil
}

// AllSeen reports whether u, in the current format, has a first sighting
// for every copy: then Seen has nothing to write.
func (u *Usage) AllSeen(copies []Copy) bool {
	if u.from < UsageVersion {
		return false
	}
	for _, c := range copies {
		if sk, ok := u.Skills[c]; !ok || sk.FirstSeenAt == nil {
			return false
		}
	}
	return true
}

// Seen sets first_seen_at for the copies that have none. It writes only
// when one of them is new.
func (s *Store) Seen(ctx context.Context, copies []Copy, now time.Time) error {
	u, err := s.Load()
	if err != nil && !IsCorrupt(err) {
		return err
	}
	if u.AllSeen(copies) {
		return nil
	}
	return s.Update(ctx, func(u *Usage) error {
		for _, c := range copies {
			if c.Validate() != nil {
				continue
			}
			if sk := u.Skill(c); sk.FirstSeenAt == nil {
				sk.FirstSeenAt = stamp(now)
			}
		}
		return nil
	})
}
