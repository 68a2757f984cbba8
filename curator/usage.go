// Package curator keeps the usage of skills in .usage.json, decides from
// it which skills are stale or archived, appends every change to the
// audit log, and schedules sync and curation with cron. It never fetches.
package curator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/internal/lockfile"
)

// The states a skill can be in.
const (
	Active   = "active"
	Stale    = "stale"
	Archived = "archived"
)

// UsageFile is the usage store's name inside the workspace's skills/.
const UsageFile = ".usage.json"

// Usage is the content of .usage.json.
type Usage struct {
	Version int                    `json:"version"`
	Skills  map[string]*SkillUsage `json:"skills"`
	Curator CuratorState           `json:"curator"`
}

// SkillUsage is what is known of one skill, keyed by its catalog name.
type SkillUsage struct {
	UseCount     int        `json:"use_count"`
	ViewCount    int        `json:"view_count"`
	FirstSeenAt  *time.Time `json:"first_seen_at,omitempty"`
	LastUsedAt   *time.Time `json:"last_used_at,omitempty"`
	LastViewedAt *time.Time `json:"last_viewed_at,omitempty"`
	State        string     `json:"state"`
	StateSince   *time.Time `json:"state_since,omitempty"`
	Pinned       bool       `json:"pinned"`
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

// StateOf returns the skill's state, active when nothing is recorded.
func (u *Usage) StateOf(name string) string {
	if s, ok := u.Skills[name]; ok && s.State != "" {
		return s.State
	}
	return Active
}

// Skill returns the record for name, creating an active one.
func (u *Usage) Skill(name string) *SkillUsage {
	s, ok := u.Skills[name]
	if !ok {
		s = &SkillUsage{State: Active}
		u.Skills[name] = s
	}
	return s
}

func newUsage() *Usage { return &Usage{Version: 1, Skills: map[string]*SkillUsage{}} }

// stamp is a time as every record keeps it: UTC, whole seconds.
func stamp(t time.Time) *time.Time {
	t = t.UTC().Truncate(time.Second)
	return &t
}

// Store is the usage file of one workspace. Writers take an exclusive
// lock, read, change, write a temporary file, fsync and rename, so no
// reader sees a partial file and no increment is lost.
type Store struct {
	path string
	// Warn receives warnings, such as a corrupt file set aside.
	Warn func(string)
}

// NewStore returns the store of the workspace whose skills directory is
// skillsDir.
func NewStore(skillsDir string) *Store {
	return &Store{path: filepath.Join(skillsDir, UsageFile), Warn: func(string) {}}
}

// Path returns the usage file's path.
func (s *Store) Path() string { return s.path }

// Load reads the usage without locking. A missing or corrupt file reads
// as empty; only Update sets a corrupt file aside.
func (s *Store) Load() (*Usage, error) {
	u, err := s.read()
	var ce *corruptError
	if errors.As(err, &ce) {
		return newUsage(), nil
	}
	return u, err
}

type corruptError struct{ err error }

func (e *corruptError) Error() string { return e.err.Error() }

func (s *Store) read() (*Usage, error) {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return newUsage(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", s.path, err)
	}
	u := newUsage()
	if err := json.Unmarshal(data, u); err != nil {
		return nil, &corruptError{err}
	}
	if u.Skills == nil {
		u.Skills = map[string]*SkillUsage{}
	}
	return u, nil
}

// lockWait bounds how long a writer waits for another; writers hold the
// lock for a read and a write of a small file.
const lockWait = 2 * time.Minute

// Update changes the usage under the lock. A file that does not parse is
// kept as .usage.json.corrupt-<UTC stamp>, a warning says so, and fn
// starts from an empty usage.
func (s *Store) Update(ctx context.Context, fn func(*Usage) error) error {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
		return err
	}
	lock, err := lockfile.Acquire(ctx, s.path+".lock", lockWait)
	if err != nil {
		return fmt.Errorf("lock %s: %w", s.path, err)
	}
	defer lock.Close()
	u, err := s.read()
	var ce *corruptError
	if errors.As(err, &ce) {
		backup := s.path + ".corrupt-" + time.Now().UTC().Format("20060102T150405Z")
		if rerr := os.Rename(s.path, backup); rerr != nil {
			return fmt.Errorf("set aside corrupt %s: %w", s.path, rerr)
		}
		s.Warn(fmt.Sprintf("%s did not parse (%v); kept it as %s and started a fresh one", s.path, ce.err, backup))
		u, err = newUsage(), nil
	}
	if err != nil {
		return err
	}
	if err := fn(u); err != nil {
		return err
	}
	return atomicfile.WriteJSON(s.path, u, 0o644)
}

// Record counts a use (or, with view, a view) of name at now.
func (s *Store) Record(ctx context.Context, name string, view bool, now time.Time) error {
	return s.Update(ctx, func(u *Usage) error {
		sk := u.Skill(name)
		if sk.FirstSeenAt == nil {
			sk.FirstSeenAt = stamp(now)
		}
		if view {
			sk.ViewCount++
			sk.LastViewedAt = stamp(now)
		} else {
			sk.UseCount++
			sk.LastUsedAt = stamp(now)
		}
		return nil
	})
}

// Seen sets first_seen_at for the names that have none. It writes only
// when one of them is new.
func (s *Store) Seen(ctx context.Context, names []string, now time.Time) error {
	u, err := s.Load()
	if err != nil {
		return err
	}
	fresh := false
	for _, n := range names {
		if sk, ok := u.Skills[n]; !ok || sk.FirstSeenAt == nil {
			fresh = true
			break
		}
	}
	if !fresh {
		return nil
	}
	return s.Update(ctx, func(u *Usage) error {
		for _, n := range names {
			if sk := u.Skill(n); sk.FirstSeenAt == nil {
				sk.FirstSeenAt = stamp(now)
			}
		}
		return nil
	})
}
