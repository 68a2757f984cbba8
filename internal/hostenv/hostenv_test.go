package hostenv

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestProcessAgrees: an Env built from the process's own directory and
// environment answers as the os functions do.
func TestProcessAgrees(t *testing.T) {
	t.Parallel()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	e := New(wd, os.Environ())
	for _, c := range []struct {
		name string
		got  func() (string, error)
		want func() (string, error)
	}{
		{"home", e.HomeDir, os.UserHomeDir},
		{"cache", e.CacheDir, os.UserCacheDir},
		{"config", e.ConfigDir, os.UserConfigDir},
		{"wd", e.Getwd, os.Getwd},
	} {
		got, gerr := c.got()
		want, werr := c.want()
		if got != want || (gerr == nil) != (werr == nil) {
			t.Errorf("%s: %q %v, the os says %q %v", c.name, got, gerr, want, werr)
		}
	}
	if got, want := e.Getenv("PATH"), os.Getenv("PATH"); got != want {
		t.Errorf("PATH %q, want %q", got, want)
	}
}

// TestInjected: an injected Env answers from its own variables and
// directory alone.
func TestInjected(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" || runtime.GOOS == "darwin" || runtime.GOOS == "plan9" {
		t.Skip("the XDG layout is the Linux and BSD one")
	}
	dir := t.TempDir()
	e := New(dir, []string{"HOME=/h", "XDG_CACHE_HOME=/c", "A=1", "A=2", "EMPTY="})
	if got, _ := e.HomeDir(); got != "/h" {
		t.Errorf("home %q", got)
	}
	if got, _ := e.CacheDir(); got != "/c" {
		t.Errorf("cache %q", got)
	}
	if got, _ := e.ConfigDir(); got != "/h/.config" {
		t.Errorf("config %q, want below the home", got)
	}
	if got := e.Getenv("A"); got != "2" {
		t.Errorf("A = %q, want the later pair", got)
	}
	if v, ok := e.LookupEnv("EMPTY"); !ok || v != "" {
		t.Errorf("EMPTY = %q %v, want set and empty", v, ok)
	}
	if _, ok := e.LookupEnv("PATH"); ok {
		t.Error("PATH leaks in from the process")
	}
	if got, _ := e.Abs("x/../y"); got != filepath.Join(dir, "y") {
		t.Errorf("Abs = %q", got)
	}
	if _, err := New(dir, []string{"XDG_CACHE_HOME=rel", "HOME=/h"}).CacheDir(); err == nil {
		t.Error("a relative XDG_CACHE_HOME is taken")
	}
	if _, err := New(dir, nil).HomeDir(); err == nil {
		t.Error("a home without $HOME")
	}
}
