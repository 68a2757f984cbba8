package repository

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// RedactURL hides the credentials in a remote URL: "https://user:token@host/x"
// becomes "https://***@host/x". An SSH user name without a password
// ("git@host:x", "ssh://git@host/x") is not a secret and is kept. Tokens
// also travel in the query string or the fragment, so every query value
// and the fragment are hidden as well: "https://host/x?access_token=t#f"
// becomes "https://host/x?access_token=***#***".
//
// A URL that net/url cannot parse is redacted too: a password holding
// "/", "#", "?", a space or a bad "%" escape hides everything between
// "://" and the last "@". When in doubt more is hidden, never less.
func RedactURL(raw string) string {
	out := raw
	start, end, ok := userinfo(raw)
	if ok && (strings.Contains(raw[start:end], ":") || !isSSH(raw)) {
		out = raw[:start] + "***" + raw[end:]
	}
	// With the user information gone, the first "?" or "#" left starts
	// the query or the fragment.
	i := strings.IndexAny(out, "?#")
	if i < 0 {
		return out
	}
	query, fragment, hasFragment := out[i:], "", false
	if j := strings.IndexByte(query, '#'); j >= 0 {
		query, fragment, hasFragment = query[:j], query[j+1:], true
	}
	var b strings.Builder
	b.WriteString(out[:i])
	if query != "" {
		b.WriteByte('?')
		for n, item := range strings.Split(query[1:], "&") {
			if n > 0 {
				b.WriteByte('&')
			}
			key, value, hasValue := strings.Cut(item, "=")
			switch {
			case !hasValue && item != "":
				b.WriteString("***") // a bare token
			case !hasValue:
			case value == "":
				b.WriteString(key + "=")
			default:
				b.WriteString(key + "=***")
			}
		}
	}
	if hasFragment {
		b.WriteByte('#')
		if fragment != "" {
			b.WriteString("***")
		}
	}
	return b.String()
}

// HasInlinePassword reports whether a remote URL carries a password in
// it, "scheme://user:password@host/..." or "user:password@host:path",
// including one that net/url cannot parse. A user name alone does not
// count, though over http(s) RedactURL hides it as well, since a token
// is often given as the user name.
func HasInlinePassword(raw string) bool {
	start, end, ok := userinfo(raw)
	return ok && strings.Contains(raw[start:end], ":")
}

// StripCredentials removes the user information from a remote URL, for
// keys that must be the same whoever's token fetched them. An SSH user
// name without a password is kept, as git needs it.
func StripCredentials(raw string) string {
	start, end, ok := userinfo(raw)
	if !ok || (!strings.Contains(raw[start:end], ":") && isSSH(raw)) {
		return raw
	}
	return raw[:start] + raw[end+1:]
}

// scpLike matches git's "[user@]host:path": the last "@" that a host name
// and a ":" follow ends the user information.
var scpLike = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.+)@[^@:/]+:`) })

// userinfo locates the user information of a remote URL: raw[start:end]
// is what comes before the "@" of the host. ok is false when there is
// none.
func userinfo(raw string) (start, end int, ok bool) {
	i := strings.Index(raw, "://")
	if i < 0 {
		// git reads a "/" before the first ":" as a local path.
		colon := strings.IndexByte(raw, ':')
		if slash := strings.IndexByte(raw, '/'); colon < 0 || (slash >= 0 && slash < colon) {
			return 0, 0, false
		}
		m := scpLike().FindStringSubmatchIndex(raw)
		if m == nil {
			return 0, 0, false
		}
		return 0, m[3], true
	}
	start = i + 3
	rest := raw[start:]
	authority := rest
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		authority = rest[:j]
	}
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		return start, start + at, true
	}
	// No "@" before the first "/", "?" or "#": a password holding one of
	// them ends the authority early, and the "@" comes later. net/url
	// then fails ("invalid port"), or takes "user:123" for host and port.
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return 0, 0, false
	}
	if _, err := url.Parse(raw); err == nil && !strings.Contains(authority, ":") {
		return 0, 0, false // "https://host/path@x": an "@" in the path
	}
	return start, start + at, true
}

// isSSH reports whether raw is an SSH remote, where a user name is part
// of the address rather than a secret.
func isSSH(raw string) bool {
	i := strings.Index(raw, "://")
	if i < 0 {
		return true // scp-like
	}
	switch strings.ToLower(raw[:i]) {
	case "ssh", "git+ssh", "ssh+git":
		return true
	}
	return false
}

// URLSecrets returns the forms in which the credentials of raw may appear
// in an error: the whole URL; its user information and its password, as
// written, decoded and encoded; its query string (with its "?") and its
// fragment (with its "#"), as written and decoded. A query is hidden
// whole, with its "?", never value by value: a short value ("?v=1") would
// blank out every "1" of a message.
func URLSecrets(raw string) []string {
	secrets := slices.Concat(userSecrets(raw), querySecrets(raw))
	if len(secrets) > 0 {
		secrets = append(secrets, raw)
	}
	return secrets
}

// querySecrets returns the query string and the fragment of raw, each
// with the character that starts it. The user information is taken out
// first, as a password may hold "?" or "#".
func querySecrets(raw string) []string {
	rest := StripCredentials(raw)
	i := strings.IndexAny(rest, "?#")
	if i < 0 {
		return nil
	}
	query, fragment := rest[i:], ""
	if j := strings.IndexByte(query, '#'); j >= 0 {
		query, fragment = query[:j], query[j:]
	}
	var secrets []string
	for _, s := range []string{query, fragment} {
		if len(s) < 2 {
			continue // "?" or "#" alone hides nothing
		}
		secrets = append(secrets, s)
		if dec, err := url.QueryUnescape(s); err == nil && dec != s {
			secrets = append(secrets, dec)
		}
	}
	return secrets
}

func userSecrets(raw string) []string {
	start, end, ok := userinfo(raw)
	if !ok {
		return nil
	}
	info := raw[start:end]
	user, pass, hasPass := strings.Cut(info, ":")
	if !hasPass && isSSH(raw) {
		return nil
	}
	secrets := []string{raw, info}
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		secrets = append(secrets, u.String(), u.User.String())
	}
	if hasPass && pass != "" {
		secrets = append(secrets, pass)
		if dec, err := url.PathUnescape(pass); err == nil && dec != pass {
			secrets = append(secrets, dec)
		}
		secrets = append(secrets, url.UserPassword(user, pass).String())
	}
	return secrets
}

// redactedError is an error whose message had secrets removed. It still
// unwraps to the original, so errors.Is works; only its text changes.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// RedactError replaces every non-empty secret in err's message with
// "***", the longest first, so a secret inside another is not left
// half shown.
func RedactError(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	changed := false
	for _, s := range longestFirst(secrets) {
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

func longestFirst(s []string) []string {
	out := slices.Clone(s)
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}
