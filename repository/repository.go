// Package repository reads skills out of their sources: git remotes,
// file systems compiled into the binary, and local directories. Every
// adapter has the same shape, the Repository interface, and every adapter
// hands out skills whose files are an fs.FS.
package repository

import (
	"github.com/skillsync/skillsync/internal/hostenv"

	"context"
	"math"
	"time"

	"github.com/skillsync/skillsync/skill"
)

// Revision identifies the state of a source: a commit hash for git, a
// content hash for the others.
type Revision string

// Repository is one source of skills.
type Repository interface {
	// Source is the source's name: one safe path component, unique in a
	// config.
	Source() string
	// Sync brings the local view of the source up to date and returns its
	// revision. It is cheap when nothing changed.
	Sync(ctx context.Context) (Revision, error)
	// Skills returns the valid skills at the synced revision and the
	// problems found on the way. An error means the source could not be
	// read at all.
	Skills(ctx context.Context) ([]skill.Skill, []skill.Problem, error)
}

// DefaultTimeout bounds one source's network operations (a git fetch, a database query) when the config sets none.
const DefaultTimeout = 60 * time.Second

// Limits that bound discovery whatever a source holds. Options take them
// when a field is zero.
const (
	// DefaultMaxEntries is how many directory entries discovery reads in
	// one source, skills' own files included, before it stops.
	DefaultMaxEntries = 100_000
	// DefaultMaxSkillSize is the largest total size of one skill's files.
	DefaultMaxSkillSize = 64 << 20
	// DefaultMaxSourceSize is the largest total size of the skills one
	// source yields.
	DefaultMaxSourceSize = 1 << 30
)

// Options are the settings discovery shares across adapters.
type Options struct {
	// Strict turns every warning into an error, which skips the skill.
	Strict bool
	// MaxFileSize makes a skill with a larger file an error; 0 means no
	// limit.
	MaxFileSize int64
	// MaxSkillSize makes a skill whose files add up to more an error
	// (max_skill_size); 0 means DefaultMaxSkillSize, below 0 no limit.
	MaxSkillSize int64
	// MaxSourceSize caps the total size of the skills a source yields
	// (max_source_size): in path order, the skill that would pass it and
	// every one after it are skipped. 0 means DefaultMaxSourceSize, below
	// 0 no limit.
	MaxSourceSize int64
	// MaxEntries caps the directory entries discovery reads in a source
	// (max_entries); past it discovery stops with a problem. 0 means
	// DefaultMaxEntries, below 0 no limit.
	MaxEntries int
	// Timeout bounds discovery in time, as the source's timeout: bounds
	// its network operations; 0 leaves the caller's context alone.
	Timeout time.Duration
	// Include keeps only the skills whose names match one of these
	// (skills:); path.Match globs, compared without case. Empty keeps all.
	Include []string
	// Exclude leaves out the skills whose names match one of these
	// (exclude:), whatever Include says.
	Exclude []string
	// Plugins, when set (plugins:), keeps discovery to the skills of these
	// plugin groups of .claude-plugin/marketplace.json, by name without
	// case; a name the manifest lacks is an error-level problem,
	// plugin-unknown, listing the plugins it has.
	Plugins []string
	// Known, when set, gives what an earlier discovery with the same
	// settings found in a skill directory whose content key it recorded:
	// the frontmatter and the files. Discovery then takes them instead of
	// parsing SKILL.md and listing the directory. It is asked only with
	// the key of a git tree ("tree:<hash>", see DirKeyFS), which names the
	// content; a skill it answers for is taken only at the path the answer
	// records. Problems that were warnings when the skill was read are not
	// reported again. It may be asked from several goroutines at once
	// (see ConcurrentFS).
	Known func(key string) (skill.Meta, []skill.File, bool)
	// Knows, when set with Known, reports whether Known may answer for a
	// key, without building the answer: the reads ahead ask it to pass a
	// folder by, and the walk then asks Known. A key it says yes to that
	// Known refuses is read by the walk itself.
	Knows func(key string) bool
	// Recalled, when set, gives what an earlier discovery with the same
	// settings found of the skill named name: its frontmatter and the
	// content key of its directory then (a ContentKey). A skill whose
	// directory changed since is taken with that frontmatter, its
	// SKILL.md not parsed, when it sits at the path the answer records
	// and its main file holds what it held then (SameContent): a skill
	// that changed elsewhere, as most changes go, is listed but not
	// parsed. As with Known, warnings of the first read are not reported
	// again. It may be asked from several goroutines at once.
	Recalled func(name string) (meta skill.Meta, key string, ok bool)
	// Expect is how many skills the source is expected to hold (the
	// cache's count from its last sync), 0 when unknown: what discovery
	// finds is gathered in room made for that many at once, rather than
	// grown a quarter at a time through thousands of skills of hundreds
	// of bytes each.
	Expect int
	// Late, when set, is called with discovery's own copy of these
	// options as each discovery starts, and may set Known, Knows,
	// Recalled and Expect there: a sync starts a source's fetch before it
	// has read the cache that answers them, and the source's discovery,
	// which comes after the fetch, takes them this way.
	Late func(*Options)
	// Env is where credentials named by variable (password_env, a DSN's
	// variable), the home directory of "~" and the default git store are
	// read from; the zero Env is the process's.
	Env hostenv.Env
}

// EntryLimit, SkillSizeLimit and SourceSizeLimit are the effective limits:
// 0 takes the default and below 0 is no limit.
func (o Options) EntryLimit() int {
	return int(limit(int64(o.MaxEntries), DefaultMaxEntries, math.MaxInt))
}

func (o Options) SkillSizeLimit() int64 {
	return limit(o.MaxSkillSize, DefaultMaxSkillSize, math.MaxInt64)
}

func (o Options) SourceSizeLimit() int64 {
	return limit(o.MaxSourceSize, DefaultMaxSourceSize, math.MaxInt64)
}

func limit(v, def, none int64) int64 {
	switch {
	case v == 0:
		return def
	case v < 0:
		return none
	}
	return v
}
