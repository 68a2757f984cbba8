package agent

import (
	"errors"
	"fmt"
	"path"
	"runtime"
	"strings"

	"github.com/skillsync/skillsync/internal/hostenv"
)

// System is what an agent's user folders depend on: the operating system
// (GOOS) and its environment. SystemOf(env) is this machine seen through
// the run's environment; a test builds one for any GOOS and resolves
// every agent's folders there, on Linux.
type System struct {
	// GOOS is a runtime.GOOS value: "linux", "darwin", "windows", ...
	GOOS string
	// Getenv reads the environment; nil reads none.
	Getenv func(string) string
}

// SystemOf is the system skillsync runs on, with env's variables.
func SystemOf(env hostenv.Env) System { return System{GOOS: runtime.GOOS, Getenv: env.Getenv} }

func (s System) getenv(key string) string {
	if s.Getenv == nil {
		return ""
	}
	return s.Getenv(key)
}

// Home is the user's home directory on s, as os.UserHomeDir finds it on
// that system: %USERPROFILE% on Windows, $home on Plan 9, $HOME
// elsewhere. Every agent in the table keeps its "~" folders there: on
// Windows Claude Code's folder is C:\Users\<user>\.claude
// (inventivehq.com/knowledge-base/claude/where-configuration-files-are-stored:
// "~/.claude/ on all platforms", with the Windows path spelled out) and
// Codex's CODEX_HOME defaults to ~/.codex on every system
// (developers.openai.com/codex/config-basic), %USERPROFILE%\.codex there.
func (s System) Home() (string, error) {
	key := "HOME"
	switch s.GOOS {
	case "windows":
		key = "USERPROFILE"
	case "plan9":
		key = "home"
	}
	if v := s.getenv(key); v != "" {
		return v, nil
	}
	return "", fmt.Errorf("find the home directory: $%s is not set", key)
}

// join is elem (slash-separated) below base, with s's separator.
func (s System) join(base, elem string) string {
	if s.GOOS != "windows" {
		return path.Join(base, elem)
	}
	base = strings.ReplaceAll(base, "/", `\`)
	elem = strings.Trim(strings.ReplaceAll(elem, "/", `\`), `\`)
	if elem == "" {
		return base
	}
	return strings.TrimRight(base, `\`) + `\` + elem
}

// isAbs reports whether p is absolute on s: a drive (C:\) or a share
// (\\server\share) on Windows, a leading / elsewhere.
func (s System) isAbs(p string) bool {
	if s.GOOS != "windows" {
		return strings.HasPrefix(p, "/")
	}
	p = strings.ReplaceAll(p, "/", `\`)
	if strings.HasPrefix(p, `\\`) {
		return true
	}
	return len(p) >= 3 && p[1] == ':' && p[2] == '\\' && (p[0]|0x20 >= 'a' && p[0]|0x20 <= 'z')
}

// errNoUserFolder is returned for an agent that keeps no user-wide
// folder of skills (it reads a project's AGENTS.md only).
var errNoUserFolder = errors.New("keeps no user-wide skills folder")

// expand resolves a table path on s: a leading "~" is the home
// directory, "$XDG_CONFIG_HOME" is that variable or ~/.config when it is
// unset or relative (the agents resolve it so on every system, Windows
// included: npx skills and OpenCode both use the xdg-basedir package,
// which falls back to ~/.config there too, not to %APPDATA%), and
// "$APPDATA" is %APPDATA% (Windows rows only). An absolute p is returned
// as it is.
func (s System) expand(p string) (string, error) {
	if rest, ok := strings.CutPrefix(p, "$XDG_CONFIG_HOME"); ok {
		base := s.getenv("XDG_CONFIG_HOME")
		if !s.isAbs(base) { // the XDG spec ignores a relative value
			home, err := s.Home()
			if err != nil {
				return "", err
			}
			base = s.join(home, ".config")
		}
		return s.join(base, rest), nil
	}
	if rest, ok := strings.CutPrefix(p, "$APPDATA"); ok {
		base := s.getenv("APPDATA")
		if !s.isAbs(base) {
			home, err := s.Home()
			if err != nil {
				return "", err
			}
			base = s.join(home, "AppData/Roaming")
		}
		return s.join(base, rest), nil
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := s.Home()
		if err != nil {
			return "", err
		}
		return s.join(home, p[1:]), nil
	}
	if !s.isAbs(p) {
		return "", fmt.Errorf("agent folder %q is not absolute", p)
	}
	if s.GOOS == "windows" {
		return s.join(p, ""), nil
	}
	return path.Clean(p), nil
}
