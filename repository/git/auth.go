package git

import (
	"github.com/skillsync/skillsync/internal/hostenv"

	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"

	"github.com/skillsync/skillsync/repository"
)

// GitAuth holds where a git source's credentials are. Secrets are read at
// every fetch, never stored, so a rotated token takes effect at once.
type GitAuth struct {
	Username            string
	PasswordEnv         string
	PasswordFile        string
	SSHKeyFile          string
	SSHKeyPassphraseEnv string
	KnownHostsFile      string
}

type authMethod = transport.AuthMethod

// ErrAuth is wrapped by errors for credentials the remote refused.
var ErrAuth = errors.New("authentication failed")

// auth returns the URL to dial, without credentials, and the method that
// carries them.
func (g *Git) auth() (string, authMethod, error) {
	a := g.cfg.Auth
	ep, err := transport.NewEndpoint(g.cfg.URL)
	if err != nil {
		if repository.HasInlinePassword(g.cfg.URL) {
			// The parser's message quotes the password's bad part.
			return "", nil, fmt.Errorf("remote URL %s does not parse: percent-encode the characters / ? # %% @ and spaces in its password, or set password_env", repository.RedactURL(g.cfg.URL))
		}
		return "", nil, fmt.Errorf("remote URL %s: %w", repository.RedactURL(g.cfg.URL), err)
	}
	switch ep.Protocol {
	case "http", "https":
		user, pass := a.Username, ep.Password
		if user == "" {
			user = ep.User
		}
		if a.PasswordEnv != "" || a.PasswordFile != "" {
			if pass, err = a.password(g.opts.Env); err != nil {
				return "", nil, err
			}
		}
		dial := repository.StripCredentials(g.cfg.URL)
		if pass == "" {
			return dial, nil, nil
		}
		if user == "" {
			user = "x-access-token"
		}
		return dial, &githttp.BasicAuth{Username: user, Password: pass}, nil
	case "ssh":
		user := ep.User
		if a.Username != "" {
			user = a.Username
		}
		if user == "" {
			user = "git"
		}
		m, err := a.sshAuth(g.opts.Env, user)
		return g.cfg.URL, m, err
	}
	return g.cfg.URL, nil, nil
}

func (a GitAuth) password(env hostenv.Env) (string, error) {
	if a.PasswordEnv != "" {
		v, ok := env.LookupEnv(a.PasswordEnv)
		if !ok || v == "" {
			return "", fmt.Errorf("auth: password_env %s is not set in the environment", a.PasswordEnv)
		}
		return v, nil
	}
	data, err := os.ReadFile(expandHome(env, a.PasswordFile))
	if err != nil {
		return "", fmt.Errorf("auth: read password_file: %w", err)
	}
	return strings.TrimSpace(string(data)), nil
}

func (a GitAuth) sshAuth(env hostenv.Env, user string) (authMethod, error) {
	var (
		m   *gitssh.PublicKeys
		err error
	)
	var agent *gitssh.PublicKeysCallback
	if a.SSHKeyFile != "" {
		pass := ""
		if a.SSHKeyPassphraseEnv != "" {
			pass = env.Getenv(a.SSHKeyPassphraseEnv)
		}
		m, err = gitssh.NewPublicKeysFromFile(user, expandHome(env, a.SSHKeyFile), pass)
		if err != nil {
			return nil, fmt.Errorf("auth: ssh_key_file %s: %w", a.SSHKeyFile, err)
		}
	} else {
		agent, err = gitssh.NewSSHAgentAuth(user)
		if err != nil {
			return nil, fmt.Errorf("auth: no ssh_key_file is set and the ssh-agent cannot be used: %w", err)
		}
	}
	known := expandHome(env, a.KnownHostsFile)
	if known == "" {
		known = expandHome(env, "~/.ssh/known_hosts")
	}
	callback, err := gitssh.NewKnownHostsCallback(known)
	if err != nil {
		return nil, fmt.Errorf("auth: known_hosts_file %s: %w", known, err)
	}
	if m != nil {
		m.HostKeyCallback = callback
		return m, nil
	}
	agent.HostKeyCallback = callback
	return agent, nil
}

func expandHome(env hostenv.Env, p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := env.HomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}

// explain turns an error of op ("fetch", "list", "publish to") into one a
// user can act on, with every secret removed: a refused login names the
// auth setting to check.
func (g *Git) explain(ctx context.Context, op string, err error) error {
	secrets := repository.URLSecrets(g.cfg.URL)
	inURL := repository.HasInlinePassword(g.cfg.URL)
	if p, perr := g.cfg.Auth.password(g.opts.Env); perr == nil {
		secrets = append(secrets, p)
	}
	redacted := repository.RedactURL(g.cfg.URL)
	var refused *loginRefused
	switch {
	case errors.As(err, &refused):
		err = fmt.Errorf("source %s: %w for %s: %s", g.cfg.Source, ErrAuth, redacted, refused.advice())
	case isAuthError(err):
		err = fmt.Errorf("%w for %s: check %s", ErrAuth, redacted, g.cfg.Auth.setting(inURL))
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		err = fmt.Errorf("%s %s: no answer within the timeout of %s: %w", op, redacted, g.cfg.Timeout, because(err, context.DeadlineExceeded))
	case ctx.Err() != nil:
		err = fmt.Errorf("%s %s: stopped: %w", op, redacted, because(err, ctx.Err()))
	case errors.Is(err, transport.ErrRepositoryNotFound):
		err = fmt.Errorf("%s %s: %w", op, redacted, &advised{err: err, advice: g.notFoundAdvice(inURL)})
	default:
		err = fmt.Errorf("%s %s: %w", op, redacted, err)
	}
	return repository.RedactError(err, secrets...)
}

// advised is an error with what to check after it. go-git's own text may
// end in ": " (a smart HTTP server's "repository not found: ").
type advised struct {
	err    error
	advice string
}

func (e *advised) Error() string {
	return strings.TrimSuffix(strings.TrimSpace(e.err.Error()), ":") + ": " + e.advice
}
func (e *advised) Unwrap() error { return e.err }

// notFoundAdvice is what to check when the remote says it has no such
// repository: its URL, and for a remote on the network the login too, as
// hosts answer a private repository's reader without credentials so.
func (g *Git) notFoundAdvice(inURL bool) string {
	advice := "check the git: URL of source " + g.cfg.Source
	if u := strings.ToLower(g.cfg.URL); strings.HasPrefix(u, "file://") || filepath.IsAbs(g.cfg.URL) {
		return advice
	}
	return advice + "; a private repository answers so to a missing or refused login: check " + g.cfg.Auth.setting(inURL)
}

// because returns err, made to match cause with errors.Is: a transport
// that was closed when its context ended reports only the closing.
func because(err, cause error) error {
	if errors.Is(err, cause) {
		return err
	}
	return fmt.Errorf("%w: %w", cause, err)
}

// setting names the config setting to check after a failed login.
func (a GitAuth) setting(inURL bool) string {
	switch {
	case inURL && a.PasswordEnv == "" && a.PasswordFile == "":
		return "the password in the git: URL"
	case a.PasswordEnv != "":
		return "password_env " + a.PasswordEnv
	case a.PasswordFile != "":
		return "password_file " + a.PasswordFile
	case a.SSHKeyFile != "":
		return "ssh_key_file " + a.SSHKeyFile
	}
	return "auth: no credentials are configured and git's credential helpers gave none (set password_env or ssh_key_file, or sign in with git)"
}

func isAuthError(err error) bool {
	if errors.Is(err, transport.ErrAuthenticationRequired) || errors.Is(err, transport.ErrAuthorizationFailed) ||
		errors.Is(err, transport.ErrInvalidAuthMethod) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "unable to authenticate") || strings.Contains(msg, "no supported methods remain")
}

// permanent reports errors that trying again cannot fix.
func permanent(err error) bool {
	if isAuthError(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, transport.ErrRepositoryNotFound) || errors.Is(err, transport.ErrEmptyRemoteRepository) ||
		errors.Is(err, ErrSourceTooLarge) || errors.Is(err, errBadPack) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "knownhosts") || strings.Contains(msg, "host key") ||
		strings.Contains(msg, "exact SHA1") || strings.Contains(msg, "not found")
}

// retry runs op, and runs it again twice after a transient failure,
// waiting half a second, then two.
func retry(ctx context.Context, op func() error) error {
	err := op()
	for _, d := range [...]time.Duration{500 * time.Millisecond, 2 * time.Second} {
		if err == nil || permanent(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(d):
		}
		err = op()
	}
	return err
}
