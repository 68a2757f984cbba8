package skillsync

import (
	"cmp"
	"path/filepath"

	"github.com/skillsync/skillsync/config"
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
	o.Include, o.Exclude, o.Plugins, o.Timeout = s.Skills, s.Exclude, s.Plugins, s.Timeout
	return o
}

// spec turns a configured source into what the kinds' registry opens.
// rev, when not "", pins the source to that revision (a locked commit).
func (e *Engine) spec(s config.Source, rev string) repository.Spec {
	host := repository.Host{StoreRoot: e.gitStore, MaxFetchSize: e.cfg.Limits.MaxFetchSize, FS: e.embedded}
	if e.progress != nil {
		host.Progress = e.progress(s.Name)
	}
	return repository.Spec{Source: s.Name, Kind: s.Kind, Settings: s.Settings, Options: e.sourceOptions(s),
		Pin: repository.Revision(rev), Host: host}
}

// open opens one configured source, pinned to rev when it is not "".
func (e *Engine) open(s config.Source, rev string) (repository.Repository, error) {
	return e.kinds.Open(e.spec(s, rev))
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
// yields (repository.Spec.Fingerprint): a config change is a change.
func (e *Engine) fingerprint(s config.Source) string {
	return repository.Spec{Kind: s.Kind, Settings: s.Settings, Options: e.sourceOptions(s)}.Fingerprint(e.base())
}

// discovery keys the skill records made under a source's options
// (repository.Options.DiscoveryKey).
func (e *Engine) discovery(s config.Source) string { return e.sourceOptions(s).DiscoveryKey() }

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

// publishesDirect reports whether a promotion to s goes straight to what
// it tracks (publish: direct) instead of a review branch.
func publishesDirect(s config.Source) bool {
	d, ok := s.Settings.(interface{ PublishesDirect() bool })
	return ok && d.PublishesDirect()
}

// location is where s is, as the lock records it: no credential.
func location(s config.Source, base string) (url, ref string) {
	if l, ok := s.Settings.(repository.Locator); ok {
		return l.Location(base)
	}
	return "", ""
}
