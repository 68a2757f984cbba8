package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/skillsync/skillsync/repository"
)

// credentialTimeout bounds one run of git credential: a helper that
// waits for someone (a keychain dialog, a browser login) gives up.
const credentialTimeout = 30 * time.Second

// maxCredentialAnswer caps what a credential helper may answer.
const maxCredentialAnswer = 64 << 10

// credential is a login skillsync found where git finds its own, for a
// remote whose config gives none. It lives for one operation and is
// never printed, logged or stored.
type credential struct {
	user, pass string
	// from names where it came from, for messages: "git's credential
	// helper", "GH_TOKEN".
	from string
	// answer is what git credential fill said, handed back to git
	// credential approve or reject; empty for a token from the
	// environment, which git has no say over.
	answer []byte
	env    []string
}

func (c *credential) method() authMethod {
	return &githttp.BasicAuth{Username: c.user, Password: c.pass}
}

// loginRefused is a login found by credential that the remote refused.
type loginRefused struct {
	from     string
	rejected bool // git credential reject removed it from the helper
	err      error
}

func (e *loginRefused) Error() string { return e.err.Error() }
func (e *loginRefused) Unwrap() error { return e.err }

// login lists the remote's refs with auth. When the remote asks for a
// login and the config gives none (an http(s) remote without auth: or a
// password in its URL), it asks git's credential helpers as git clone
// would (git credential fill: the keychain, Git Credential Manager, gh
// auth setup-git, a store file), then for github.com GH_TOKEN and
// GITHUB_TOKEN, and lists again with what they give. A login the remote
// takes is approved (git credential approve), one it refuses is rejected
// (git credential reject), as git does. It returns the refs and the auth
// for the rest of the operation.
func (g *Git) login(ctx context.Context, remoteURL string, auth authMethod, relay *sshRelay) ([]*plumbing.Reference, authMethod, error) {
	refs, err := g.listRefs(ctx, remoteURL, auth, relay)
	if err == nil || auth != nil || !isAuthError(err) || repository.HasInlinePassword(g.cfg.URL) {
		return refs, auth, err
	}
	cred := findCredential(ctx, remoteURL, g.cfg.Auth.Username, g.environ())
	if cred == nil {
		return nil, nil, err
	}
	refs, err = g.listRefs(ctx, remoteURL, cred.method(), relay)
	switch {
	case err == nil:
		cred.settle(ctx, "approve")
		return refs, cred.method(), nil
	case isAuthError(err):
		rejected := cred.settle(ctx, "reject")
		return nil, nil, &loginRefused{from: cred.from, rejected: rejected, err: repository.RedactError(err, cred.pass)}
	}
	return nil, nil, repository.RedactError(err, cred.pass)
}

// environ is the environment git's credential helpers run in and tokens
// are read from: the configured one, else the run's (the engine's host
// environment, which is the process's unless a caller injected one).
func (g *Git) environ() []string {
	if g.cfg.Env != nil {
		return g.cfg.Env
	}
	return g.opts.Env.Environ()
}

// findCredential asks git credential fill for a login to remoteURL, and
// for github.com falls back to GH_TOKEN, then GITHUB_TOKEN. It returns nil
// when nothing has one, and where git is not installed it asks only the
// environment.
func findCredential(ctx context.Context, remoteURL, user string, env []string) *credential {
	u, err := url.Parse(remoteURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil
	}
	if user == "" && u.User != nil {
		user = u.User.Username()
	}
	if c := fillCredential(ctx, u, user, env); c != nil {
		return c
	}
	if user, pass, from, ok := envToken(u, env); ok {
		return &credential{user: user, pass: pass, from: from}
	}
	return nil
}

// envToken is the fallback for github.com when git has no login: the
// token gh and GitHub Actions set, GH_TOKEN first, as the user
// x-access-token. No other host gets it, and it goes over https only: a
// 401 from whoever answers a plain-http request must not earn the token
// in clear text.
func envToken(u *url.URL, env []string) (user, pass, from string, ok bool) {
	if u.Scheme != "https" || !strings.EqualFold(u.Hostname(), "github.com") {
		return "", "", "", false
	}
	for _, name := range []string{"GH_TOKEN", "GITHUB_TOKEN"} {
		if v := strings.TrimSpace(lookup(env, name)); v != "" {
			return "x-access-token", v, name, true
		}
	}
	return "", "", "", false
}

// lookup returns the value of name in env, the last one when it is set
// twice, as the environment of a process takes it.
func lookup(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// fillCredential runs git credential fill for u. Nothing is asked of a
// person: terminal prompts and askpass programs are off.
func fillCredential(ctx context.Context, u *url.URL, user string, env []string) *credential {
	desc := []string{"protocol=" + u.Scheme, "host=" + u.Host}
	if p := strings.TrimPrefix(u.Path, "/"); p != "" {
		desc = append(desc, "path="+p)
	}
	if user != "" {
		desc = append(desc, "username="+user)
	}
	for _, line := range desc {
		// A newline or NUL could smuggle a key into the description; a
		// carriage return does the same to helpers that end lines at it
		// (an unpatched git passes it on: CVE-2024-52006).
		if strings.ContainsAny(line, "\r\n\x00") {
			return nil
		}
	}
	out, ok := runCredential(ctx, "fill", []byte(strings.Join(desc, "\n")+"\n\n"), env)
	if !ok {
		return nil
	}
	c := &credential{from: "git's credential helper", answer: out, env: env}
	for _, line := range strings.Split(string(out), "\n") {
		k, v, _ := strings.Cut(line, "=")
		switch k {
		case "username":
			c.user = v
		case "password":
			c.pass = v
		}
	}
	if c.pass == "" {
		return nil
	}
	return c
}

// settle tells git's credential helpers how the login went: approve
// after the remote took it, reject after it refused it. A token from
// the environment is not git's to keep. It reports whether git did it.
func (c *credential) settle(ctx context.Context, verb string) bool {
	if len(c.answer) == 0 {
		return false
	}
	// The operation's own deadline may be spent; the helper still hears.
	ctx = context.WithoutCancel(ctx)
	_, ok := runCredential(ctx, verb, append(bytes.TrimRight(c.answer, "\n"), '\n', '\n'), c.env)
	return ok
}

// runCredential runs git credential verb with input on its stdin, in env
// with every prompt off, and returns its output when it succeeded. Where
// git is not installed it reports false and says nothing. Neither its
// output nor its errors are ever shown: they may hold the secret.
func runCredential(ctx context.Context, verb string, input []byte, env []string) ([]byte, bool) {
	bin, err := exec.LookPath("git")
	if err != nil {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(ctx, credentialTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "credential", verb)
	cmd.Env = append(append([]string(nil), env...),
		"GIT_TERMINAL_PROMPT=0", // never ask on a terminal
		"GIT_ASKPASS=",          // nor through an askpass program (empty: none)
		"SSH_ASKPASS=",
		"GCM_INTERACTIVE=never", // nor in Git Credential Manager's windows
	)
	cmd.Stdin = bytes.NewReader(input)
	out := &cappedBuffer{max: maxCredentialAnswer}
	cmd.Stdout = out
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil || out.over {
		return nil, false
	}
	return out.Bytes(), true
}

// cappedBuffer keeps at most max bytes and notes that more came.
type cappedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.max {
		b.over = true
		return 0, errors.New("the credential helper's answer is too long")
	}
	return b.Buffer.Write(p)
}

// refusedMessage says what to do after a login found by credential was
// refused.
func (e *loginRefused) advice() string {
	if e.rejected {
		return fmt.Sprintf("the login %s gave was refused, and git credential reject removed it; sign in again with git (a git fetch of the remote asks) or set auth: password_env", e.from)
	}
	return fmt.Sprintf("the login from %s was refused; renew it or set auth: password_env", e.from)
}
