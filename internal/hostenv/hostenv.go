// Package hostenv is what a run of skillsync takes from its host: the
// working directory, the environment variables and the user's folders
// found from them. The command line builds one Env and hands it down (an Engine takes it with WithHost), so
// tests run commands side by side, each with its own directory and
// environment, and no code reads the process's own state behind their
// back.
package hostenv

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
)

// Env is a working directory and an environment. The zero Env is the
// process's own: os.Getwd and os.LookupEnv.
type Env struct {
	// Dir is the working directory; "" means the process's.
	Dir string
	// Vars is the whole environment when not nil: a variable missing
	// from it is unset. Nil means the process's environment.
	Vars map[string]string
}

// New returns the Env with dir as its working directory and environ
// (KEY=VALUE pairs, as os.Environ gives them; a later pair wins) as its
// whole environment.
func New(dir string, environ []string) Env {
	vars := make(map[string]string, len(environ))
	for _, kv := range environ {
		for i := 0; i < len(kv); i++ {
			if kv[i] == '=' {
				vars[kv[:i]] = kv[i+1:]
				break
			}
		}
	}
	return Env{Dir: dir, Vars: vars}
}

// Environ returns the environment as KEY=VALUE pairs, sorted; the
// process's when e has no variables of its own.
func (e Env) Environ() []string {
	if e.Vars == nil {
		return os.Environ()
	}
	out := make([]string, 0, len(e.Vars))
	for k, v := range e.Vars {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// Getwd returns the working directory.
func (e Env) Getwd() (string, error) {
	if e.Dir != "" {
		return e.Dir, nil
	}
	return os.Getwd()
}

// LookupEnv returns the value of the variable key and whether it is set.
func (e Env) LookupEnv(key string) (string, bool) {
	if e.Vars == nil {
		return os.LookupEnv(key)
	}
	v, ok := e.Vars[key]
	return v, ok
}

// Getenv returns the value of the variable key, "" when it is unset.
func (e Env) Getenv(key string) string {
	v, _ := e.LookupEnv(key)
	return v
}

// Abs makes p absolute from the working directory, cleaned.
func (e Env) Abs(p string) (string, error) {
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	wd, err := e.Getwd()
	if err != nil {
		return "", err
	}
	return filepath.Join(wd, p), nil
}

// HomeDir is os.UserHomeDir read from this environment.
func (e Env) HomeDir() (string, error) {
	if e.Vars == nil {
		return os.UserHomeDir()
	}
	if v := e.Getenv(homeVar); v != "" {
		return v, nil
	}
	return "", errors.New("$" + homeVar + " is not defined")
}

// CacheDir is os.UserCacheDir read from this environment.
func (e Env) CacheDir() (string, error) {
	if e.Vars == nil {
		return os.UserCacheDir()
	}
	return e.userDir(cacheVar, cacheBelowHome)
}

// ConfigDir is os.UserConfigDir read from this environment.
func (e Env) ConfigDir() (string, error) {
	if e.Vars == nil {
		return os.UserConfigDir()
	}
	return e.userDir(configVar, configBelowHome)
}

// userDir is the value of variable when it is absolute, else below the
// home directory as the system places it ("" below means there is no
// fallback).
func (e Env) userDir(variable, below string) (string, error) {
	if v := e.Getenv(variable); v != "" {
		if filepath.IsAbs(v) {
			return v, nil
		}
		if below != "" {
			return "", errors.New("path in $" + variable + " is relative")
		}
	}
	if below == "" {
		return "", errors.New("$" + variable + " is not defined")
	}
	home, err := e.HomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, below), nil
}
