package repository

import (
	"net/url"
	"strings"
)

// RedactURL hides the credentials in a remote URL: "https://user:token@host/x"
// becomes "https://***@host/x". An SSH user name without a password
// ("git@host:x", "ssh://git@host/x") is not a secret and is kept.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil || u.Host == "" {
		return raw
	}
	_, hasPassword := u.User.Password()
	if !hasPassword && (u.Scheme == "ssh" || u.Scheme == "git+ssh") {
		return raw
	}
	u.User = nil
	s := u.String()
	return strings.Replace(s, "://", "://***@", 1)
}

// stripCredentials removes user information from an http(s) URL, for keys
// that must be the same whoever's token fetched them.
func stripCredentials(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil || u.Host == "" {
		return raw
	}
	if _, hasPassword := u.User.Password(); !hasPassword && u.Scheme == "ssh" {
		return raw
	}
	u.User = nil
	return u.String()
}

// redactedError is an error whose message had secrets removed. It still
// unwraps to the original, so errors.Is works; only its text changes.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redactError replaces every non-empty secret in err's message with "***".
func redactError(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	changed := false
	for _, s := range secrets {
		if s != "" && strings.Contains(msg, s) {
			msg = strings.ReplaceAll(msg, s, "***")
			changed = true
		}
	}
	if !changed {
		return err
	}
	return &redactedError{msg: msg, err: err}
}
