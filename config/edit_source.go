package config

import (
	"github.com/skillsync/skillsync/internal/hostenv"

	"cmp"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/skillsync/skillsync/repository"
)

// DefaultGitHost is where owner/repo points when neither
// $SKILLSYNC_GIT_HOST nor default_git_host: says otherwise.
const DefaultGitHost = "https://github.com/"

// GitHost returns the host owner/repo is resolved against: the
// environment's SKILLSYNC_GIT_HOST, else the config's default_git_host:
// (configured), else GitHub. A bare host name gets https://; the result
// ends in "/".
func GitHost(env hostenv.Env, configured string) (string, error) {
	h, err := gitHost(env, configured)
	if err != nil {
		return "", &ArgError{Err: err}
	}
	return h, nil
}

func gitHost(env hostenv.Env, configured string) (string, error) {
	return normalGitHost(cmp.Or(env.Getenv("SKILLSYNC_GIT_HOST"), configured, DefaultGitHost))
}

// normalGitHost checks h, a host or an https:// URL, and returns it as
// an URL ending in "/".
func normalGitHost(h string) (string, error) {
	h = strings.TrimSpace(h)
	if !strings.Contains(h, "://") {
		h = "https://" + h
	}
	u, err := url.Parse(h)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("git host %q: want https://HOST/ (from SKILLSYNC_GIT_HOST or default_git_host:)", redactArg(h))
	}
	return strings.TrimRight(h, "/") + "/", nil
}

var (
	// owner/repo, then any path inside it, then @ref: GitHub's names are
	// letters, digits, ".", "_" and "-".
	// Both are compiled at their first use, not at every start of the CLI.
	shorthand = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)((?:/[^@]+)?)(?:@(.+))?$`)
	})
	scpLike = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]+@[A-Za-z0-9_.-]+:`) })
)

// ParseSource reads what a person types to name a source:
//
//   - owner/repo, owner/repo@ref, owner/repo/path@ref: a repository on
//     host (see GitHost);
//   - a remote URL (https://, http://, ssh://, git://, file://, or
//     git@host:path);
//   - a web page of a folder, https://host/owner/repo/tree/REF/PATH (GitHub
//     and Gitea) or https://host/group/repo/-/tree/REF/PATH (GitLab): the
//     ref and the path come from it; a ref with a "/" in it cannot be told
//     from the path, so give such a ref with --ref;
//   - a local directory: a path starting with /, ./, ../ or ~/, ".", "..",
//     or a name without "/" that is a directory here. It comes back
//     absolute.
func ParseSource(env hostenv.Env, arg, host string) (Entry, error) {
	e, err := parseSource(env, arg, host)
	if err != nil {
		return Entry{}, &ArgError{Err: err}
	}
	return e, nil
}

// ArgError is a source named on the command line that cannot be used as
// given: a usage mistake, for the caller to fix.
type ArgError struct{ Err error }

func (e *ArgError) Error() string { return e.Err.Error() }
func (e *ArgError) Unwrap() error { return e.Err }

func parseSource(env hostenv.Env, arg, host string) (Entry, error) {
	s := strings.TrimSpace(arg)
	lower := strings.ToLower(s)
	switch {
	case s == "":
		return Entry{}, fmt.Errorf("no source given")
	case strings.ContainsAny(s, "\n\r\x00"):
		return Entry{}, fmt.Errorf("source %q holds a control character", redactArg(s))
	case hasCredentials(s):
		return Entry{}, fmt.Errorf("source %s holds credentials, which would be written into the config and shared with it; give the URL without them and set auth.password_env (or password_file, ssh_key_file) on the entry", redactArg(s))
	case s == "." || s == ".." || strings.HasPrefix(s, "/") || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") || s == "~" || strings.HasPrefix(s, "~/"):
		return localEntry(env, s)
	case strings.HasPrefix(lower, "file://"), strings.HasPrefix(lower, "ssh://"), strings.HasPrefix(lower, "git://"), scpLike().MatchString(s):
		u, ref := splitRef(s)
		return Entry{Git: u, Ref: ref}, nil
	case strings.HasPrefix(lower, "https://"), strings.HasPrefix(lower, "http://"):
		e, err := webEntry(s)
		if err == nil && e.Ref == "" && e.Path == "" {
			e.Git, e.Ref = splitRef(e.Git)
		}
		return e, err
	}
	if m := shorthand().FindStringSubmatch(s); m != nil {
		if strings.Contains(m[1], ".") && m[3] != "" {
			// github.com/acme/skills: a URL without its scheme, which as
			// owner/repo/path would name github.com's repository acme.
			return Entry{}, fmt.Errorf("source %s: %s looks like a host, not an owner: write https://%s", redactArg(s), m[1], redactArg(s))
		}
		repo := strings.TrimSuffix(m[2], ".git")
		e := Entry{Git: host + m[1] + "/" + repo, Ref: m[4], Path: strings.Trim(m[3], "/")}
		if e.Path != "" {
			if err := checkRepoPath(e.Path); err != nil {
				return Entry{}, fmt.Errorf("source %s: %w", redactArg(s), err)
			}
		}
		return e, nil
	}
	if !strings.Contains(s, "/") {
		if abs, err := env.Abs(s); err != nil {
			return Entry{}, fmt.Errorf("source %s: %w", redactArg(s), err)
		} else if info, err := os.Stat(abs); err == nil && info.IsDir() {
			return localEntry(env, s)
		}
	}
	return Entry{}, fmt.Errorf("source %q: not owner/repo, a git URL or a directory (write ./%s for a directory here)", redactArg(s), redactArg(s))
}

// hasCredentials reports whether a URL carries a secret: any user
// information in an http(s) URL (a token may stand where the user name
// does), a password in any other, also one net/url cannot parse
// ("https://user:pa/ss@host/x").
func hasCredentials(s string) bool {
	if repository.HasInlinePassword(s) {
		return true
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		// scp-like user:password@host:path
		at := strings.Index(s, "@")
		return at > 0 && strings.Contains(s[:at], ":")
	}
	host, _, _ := strings.Cut(rest, "/")
	user, _, hasUser := strings.Cut(host, "@")
	if !hasUser {
		return false
	}
	scheme = strings.ToLower(scheme)
	return scheme == "http" || scheme == "https" || strings.Contains(user, ":")
}

// redactArg hides the credentials of s, as repository.RedactURL does (the
// user information, also where net/url cannot parse it, every query
// value and the fragment), so no message repeats one.
func redactArg(s string) string { return repository.RedactURL(s) }

func localEntry(env hostenv.Env, s string) (Entry, error) {
	p := s
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := env.HomeDir()
		if err != nil {
			return Entry{}, fmt.Errorf("source %s: %w", redactArg(s), err)
		}
		p = filepath.Join(home, p[1:])
	}
	abs, err := env.Abs(p)
	if err != nil {
		return Entry{}, fmt.Errorf("source %s: %w", redactArg(s), err)
	}
	if bareRepository(abs) {
		// A bare repository has no files to read as a folder: it is read
		// as the git repository it is.
		slashed := filepath.ToSlash(abs)
		if !strings.HasPrefix(slashed, "/") {
			slashed = "/" + slashed // C:/x
		}
		return Entry{Git: (&url.URL{Scheme: "file", Path: slashed}).String()}, nil
	}
	return Entry{Dir: abs}, nil
}

// bareRepository reports whether dir is a bare git repository: HEAD, and
// the objects and refs folders, at its top.
func bareRepository(dir string) bool {
	head, err := os.Lstat(filepath.Join(dir, "HEAD"))
	if err != nil || !head.Mode().IsRegular() {
		return false
	}
	for _, sub := range []string{"objects", "refs"} {
		if info, err := os.Lstat(filepath.Join(dir, sub)); err != nil || !info.IsDir() {
			return false
		}
	}
	return true
}

// webEntry reads an https URL: a remote, or the web page of a folder in
// one.
func webEntry(s string) (Entry, error) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return Entry{}, fmt.Errorf("source %q is not a URL", redactArg(s))
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	at, rest := -1, 0
	for i, p := range parts {
		switch {
		case p == "-" && i >= 2 && i+2 < len(parts) && (parts[i+1] == "tree" || parts[i+1] == "blob"):
			at, rest = i, i+2 // GitLab: group/.../repo/-/tree/REF/PATH
		case i == 2 && (p == "tree" || p == "blob") && i+1 < len(parts):
			at, rest = i, i+1 // GitHub, Gitea: owner/repo/tree/REF/PATH
		}
		if at >= 0 {
			break
		}
	}
	if at < 0 || u.RawQuery != "" {
		return Entry{Git: s}, nil
	}
	repoURL := *u
	repoURL.Path = "/" + strings.Join(parts[:at], "/")
	repoURL.RawPath, repoURL.Fragment, repoURL.RawQuery = "", "", ""
	e := Entry{Git: strings.TrimSuffix(repoURL.String(), ".git"), Ref: parts[rest]}
	p := strings.Join(parts[rest+1:], "/")
	if base := path.Base(p); strings.EqualFold(base, "SKILL.md") {
		p = path.Dir(p)
	}
	if p != "." && p != "" {
		if err := checkRepoPath(p); err != nil {
			return Entry{}, fmt.Errorf("source %s: %w", redactArg(s), err)
		}
		e.Path = p
	}
	return e, nil
}

// splitRef splits URL@ref, the form add prints, into the URL and the ref:
// the ref is what follows the last "@" of the URL's path (after the host,
// or after the ":" of git@host:path), so a user in the host part is kept.
func splitRef(s string) (string, string) {
	if strings.ContainsAny(s, "?#") {
		return s, ""
	}
	start := 0
	if i := strings.Index(s, "://"); i >= 0 {
		slash := strings.Index(s[i+3:], "/")
		if slash < 0 {
			return s, ""
		}
		start = i + 3 + slash
	} else if i := strings.Index(s, ":"); i >= 0 {
		start = i + 1
	}
	at := strings.LastIndex(s[start:], "@")
	if at < 0 {
		return s, ""
	}
	u, ref := s[:start+at], s[start+at+1:]
	if ref == "" || strings.HasSuffix(u, "/") || strings.HasSuffix(u, ":") {
		return s, ""
	}
	return u, ref
}

// checkRepoPath refuses a path that would leave the repository.
func checkRepoPath(p string) error {
	for _, part := range strings.Split(p, "/") {
		if part == ".." || part == "." {
			return fmt.Errorf("path %q must stay inside the repository: no . or ..", p)
		}
	}
	return nil
}
