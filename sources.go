package skillsync

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/lock"
	"github.com/skillsync/skillsync/repository"
)

// options returns the discovery settings every source shares: strictness
// and the limits.
func (e *Engine) options() repository.Options {
	l := e.cfg.Limits
	return repository.Options{Strict: e.cfg.Strict, MaxFileSize: l.MaxFileSize, MaxSkillSize: l.MaxSkillSize,
		MaxSourceSize: l.MaxSourceSize, MaxEntries: l.MaxEntries, Env: e.env}
}

// sourceOptions returns the discovery settings of one marketplace source:
// the shared ones, its selection and its timeout.
func (e *Engine) sourceOptions(s config.Source) repository.Options {
	o := e.options()
	o.Include, o.Exclude, o.Timeout = s.Skills, s.Exclude, s.Timeout
	return o
}

// spec turns a configured source into what repository.Open takes. rev,
// when not "", pins a git source to that commit.
func (e *Engine) spec(s config.Source, rev string) (repository.Spec, error) {
	sp := repository.Spec{Source: s.Name, Kind: s.Kind, Dir: s.Dir, Options: e.sourceOptions(s)}
	switch s.Kind {
	case repository.KindEmbedded:
		fsys, ok := e.embedded[s.Embedded]
		if !ok {
			return sp, fmt.Errorf("source %s: no embedded file system named %q (this program has: %s)",
				s.Name, s.Embedded, strings.Join(slices.Sorted(maps.Keys(e.embedded)), ", "))
		}
		sp.FS = fsys
	case repository.KindGit:
		var progress io.Writer
		if e.progress != nil {
			progress = e.progress(s.Name)
		}
		sp.Git = repository.GitConfig{URL: s.Git, Ref: s.Ref, Path: s.Path, Depth: s.Depth, Timeout: s.Timeout,
			Auth: s.Auth, StoreRoot: e.gitStore, Progress: progress, MaxFetchSize: e.cfg.Limits.MaxFetchSize}
		if rev != "" {
			sp.Git.Ref = rev
		}
	case repository.KindPostgres:
		sp.Postgres = repository.PostgresConfig{DSNEnv: s.Postgres, DSNFile: s.DSNFile, Schema: s.Schema, Create: s.Create, Timeout: s.Timeout}
	}
	return sp, nil
}

// open opens one configured source, pinned to rev when it is not "".
func (e *Engine) open(s config.Source, rev string) (repository.Repository, error) {
	sp, err := e.spec(s, rev)
	if err != nil {
		return nil, err
	}
	return repository.Open(sp)
}

// source returns the configured source named name.
func (e *Engine) source(name string) (config.Source, bool) {
	for _, s := range e.cfg.Sources {
		if s.Name == name {
			return s, true
		}
	}
	return config.Source{}, false
}

// checkNames refuses names that are not configured sources.
func (e *Engine) checkNames(names []string) error {
	for _, n := range names {
		if _, ok := e.source(n); !ok {
			return usageErrorf("no source named %q in the config %s", n, e.cfg.File)
		}
	}
	return nil
}

// fingerprint digests every setting of a source that changes what it
// yields, so that a config change is a change: the source is read and
// materialized again even at the same revision.
func (e *Engine) fingerprint(s config.Source) string {
	desc := lock.Describe(s, e.base())
	h := sha256.New()
	for _, part := range []string{string(s.Kind), desc.URL, s.Ref, s.Path, e.sourceOptions(s).Fingerprint()} {
		fmt.Fprintf(h, "%d:%s;", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// discovery digests the settings that decide what a skill's content is
// read as (strictness, discovery rules, limits, selection): skill records
// made under the same digest stand for reading the same content again,
// whatever the ref, commit or path the source is at.
func (e *Engine) discovery(s config.Source) string {
	sum := sha256.Sum256([]byte(e.sourceOptions(s).Fingerprint()))
	return hex.EncodeToString(sum[:16])
}

// maxSkillSize is the cap the cache and the targets enforce on one skill,
// behind discovery's own.
func (e *Engine) maxSkillSize() int64 {
	return cmp.Or(e.cfg.Limits.MaxSkillSize, repository.DefaultMaxSkillSize)
}

// base is the folder relative paths of the config are taken from: the
// config file's, or the workspace for the built-in default.
func (e *Engine) base() string {
	if e.cfg.File == "" {
		return e.cfg.Workspace
	}
	return filepath.Dir(e.cfg.File)
}

// closeRepository releases what an open source holds (a database's
// connections and spool); a source with nothing to release is left be.
func closeRepository(r repository.Repository) {
	if c, ok := r.(io.Closer); ok {
		c.Close()
	}
}
