package git

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skillsync/skillsync/repository"
)

// Kind is the name of the git kind, and its location key.
const Kind repository.Kind = "git"

// The values of the publish: key.
const (
	PublishBranch = "branch"
	PublishDirect = "direct"
)

// DefaultDepth is the history fetched when a source does not say: one
// commit is all skillsync reads.
const DefaultDepth = 1

// Driver returns the git kind: a source read from a git remote (git:
// URL, with ref:, path:, depth:, auth:, allow_inline_credentials: and
// publish:).
func Driver() repository.Driver {
	return repository.Driver{
		Kind:     Kind,
		Keys:     []string{"git"},
		Usage:    "git: URL",
		Settings: func() repository.Settings { return &Settings{} },
		Open:     open,
	}
}

// Settings are a git source's keys in the config.
type Settings struct {
	URL  string
	Ref  string
	Path string
	// Depth is nil when the config does not say: DefaultDepth.
	Depth                  *int
	Auth                   GitAuth
	AllowInlineCredentials bool
	// Publish is publish:, branch (the default) or direct.
	Publish string
	// remote is URL made absolute from the config's folder where it is a
	// relative local path (Resolve): fetches use it, as every relative
	// path of a config is the config's folder's; the lock and messages
	// keep URL as written, the same on every machine.
	remote string
}

// Keys lists the config keys of a git source.
func (s *Settings) Keys() []repository.Key {
	a := &s.Auth
	return []repository.Key{
		{Name: "git", Value: &s.URL},
		{Name: "ref", Value: &s.Ref},
		{Name: "path", Value: &s.Path},
		{Name: "depth", Value: &s.Depth},
		{Name: "auth", Value: []repository.Key{
			{Name: "username", Value: &a.Username},
			{Name: "password_env", Value: &a.PasswordEnv},
			{Name: "password_file", Value: &a.PasswordFile},
			{Name: "ssh_key_file", Value: &a.SSHKeyFile},
			{Name: "ssh_key_passphrase_env", Value: &a.SSHKeyPassphraseEnv},
			{Name: "known_hosts_file", Value: &a.KnownHostsFile},
		}},
		{Name: "allow_inline_credentials", Value: &s.AllowInlineCredentials},
		{Name: "publish", Value: &s.Publish},
	}
}

// Resolve checks the settings, makes the auth files absolute from base,
// and names the source after the remote's repository.
func (s *Settings) Resolve(base string) (string, error) {
	switch s.Publish {
	case "", PublishBranch, PublishDirect:
	default:
		return "", fmt.Errorf("publish %q: use branch (a review branch per skill, the default) or direct (push to the tracked branch)", s.Publish)
	}
	if p := s.Path; p != "" && (filepath.IsAbs(p) || strings.HasPrefix(p, "/") || slices.Contains(strings.Split(filepath.ToSlash(p), "/"), "..")) {
		return "", fmt.Errorf("path %q must stay inside the repository: no .., not absolute", p)
	}
	if s.Depth != nil && *s.Depth < 0 {
		return "", fmt.Errorf("depth must be 0 (full history) or more")
	}
	if repository.HasInlinePassword(s.URL) && !s.AllowInlineCredentials {
		return "", fmt.Errorf("the git URL holds a password (%s); a config is often committed and shown, so put the secret in auth.password_env or auth.password_file instead, or set allow_inline_credentials: true to accept it",
			repository.RedactURL(s.URL))
	}
	for _, f := range []*string{&s.Auth.PasswordFile, &s.Auth.SSHKeyFile, &s.Auth.KnownHostsFile} {
		if err := repository.Literal(*f); err != nil {
			return "", fmt.Errorf("auth: %w", err)
		}
		*f = repository.AbsPath(base, *f)
	}
	s.remote = localRemote(base, s.URL)
	if s.Depth == nil {
		d := DefaultDepth
		s.Depth = &d
	}
	return repository.RepoName(s.URL), nil
}

// localRemote is url made absolute from base where it is a relative local
// path: no scheme, not absolute, not scp-like (host:path, user@host:path,
// whose colon comes before any slash). "" for any other.
func localRemote(base, url string) string {
	if base == "" || url == "" || strings.Contains(url, "://") || filepath.IsAbs(url) || filepath.VolumeName(url) != "" {
		return ""
	}
	if i := strings.IndexAny(url, ":/\\"); i >= 0 && url[i] == ':' {
		return ""
	}
	// ~ is the home folder, as in a dir: entry; joined to the config's
	// folder it named a folder called ~ there.
	return repository.AbsPath(base, url)
}

// Location is the remote without its credentials, and the ref.
func (s *Settings) Location(string) (url, ref string) {
	return repository.RedactURL(s.URL), s.Ref
}

// Fingerprint names what, besides the location, changes what the source
// yields: the folder read.
func (s *Settings) Fingerprint() string { return s.Path }

// PublishesDirect reports publish: direct: a promotion pushes to the
// tracked branch instead of a review branch.
func (s *Settings) PublishesDirect() bool { return s.Publish == PublishDirect }

// Remote is the git remote's URL, as configured.
func (s *Settings) Remote() string { return s.URL }

func open(sp repository.Spec) (repository.Repository, error) {
	s, ok := sp.Settings.(*Settings)
	if !ok {
		return nil, fmt.Errorf("source %s: the settings of a git source are %T", sp.Source, sp.Settings)
	}
	cfg := GitConfig{Source: sp.Source, URL: cmp.Or(s.remote, s.URL), Ref: s.Ref, Path: s.Path, Depth: DefaultDepth, Timeout: sp.Options.Timeout,
		Auth: s.Auth, StoreRoot: sp.Host.StoreRoot, Progress: sp.Host.Progress, MaxFetchSize: sp.Host.MaxFetchSize}
	if s.Depth != nil {
		cfg.Depth = *s.Depth
	}
	if sp.Pin != "" {
		cfg.Ref = string(sp.Pin)
	}
	return NewGit(cfg, sp.Options), nil
}

// Tracks is the ref tracked and the folder read.
func (s *Settings) Tracks() (ref, path string) { return s.Ref, s.Path }
