package skillsync

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/repository"
)

// LockFileName is the lock file in the workspace: the revision of every
// source and the hash of every skill, so every host syncs the same bytes.
const LockFileName = "skillsync.lock"

// Lock is the content of skillsync.lock.
type Lock struct {
	Version int                    `json:"version"`
	Sources map[string]*LockSource `json:"sources"`
}

// LockSource pins one source.
type LockSource struct {
	Type     string            `json:"type"`
	URL      string            `json:"url,omitempty"`
	Ref      string            `json:"ref,omitempty"`
	Revision string            `json:"revision"`
	Skills   map[string]string `json:"skills"`
}

// ReadLock reads the workspace's lock file; ok is false when there is none.
func ReadLock(workspace string) (lock *Lock, ok bool, err error) {
	name := filepath.Join(workspace, LockFileName)
	data, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return &Lock{Version: 1, Sources: map[string]*LockSource{}}, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	lock = &Lock{}
	if err := json.Unmarshal(data, lock); err != nil {
		return nil, false, fmt.Errorf("%s does not parse: %w; delete it and run skillsync sync to write a new one", name, err)
	}
	if lock.Sources == nil {
		lock.Sources = map[string]*LockSource{}
	}
	return lock, true, nil
}

// write saves the lock when it differs from the file.
func (l *Lock) write(workspace string) error {
	return atomicfile.WriteJSONIfChanged(filepath.Join(workspace, LockFileName), l, 0o644)
}

// lockSource describes a configured source as the lock records it.
func lockSource(rc RepositoryConfig) *LockSource {
	ls := &LockSource{Type: rc.Type(), Skills: map[string]string{}}
	switch rc.Type() {
	case "git":
		ls.URL, ls.Ref = repository.RedactURL(rc.Git), rc.Ref
	case "dir":
		ls.URL = rc.Dir
	case "embedded":
		ls.URL = rc.Embedded
	}
	return ls
}

// FrozenError is a sync --frozen whose config or content does not match
// the lock. Diff has one line per difference.
type FrozenError struct {
	Diff []string
}

func (e *FrozenError) Error() string {
	return "the lock file does not match:\n  " + strings.Join(e.Diff, "\n  ") +
		"\nrun skillsync update to move the lock, or restore the config"
}

// compareConfig lists how the config's sources differ from the lock's.
func (l *Lock) compareConfig(cfg *Config) []string {
	var diff []string
	seen := map[string]bool{}
	for _, rc := range cfg.Repositories {
		seen[rc.Name] = true
		want := lockSource(rc)
		got, ok := l.Sources[rc.Name]
		switch {
		case !ok:
			diff = append(diff, fmt.Sprintf("+ source %s (%s %s) is in the config, not in the lock", rc.Name, want.Type, want.URL))
		case got.Type != want.Type || got.URL != want.URL || got.Ref != want.Ref:
			diff = append(diff, fmt.Sprintf("~ source %s: lock has %s %s ref %q, config has %s %s ref %q",
				rc.Name, got.Type, got.URL, got.Ref, want.Type, want.URL, want.Ref))
		}
	}
	var gone []string
	for name := range l.Sources {
		if !seen[name] {
			gone = append(gone, name)
		}
	}
	sort.Strings(gone)
	for _, name := range gone {
		diff = append(diff, fmt.Sprintf("- source %s is in the lock, not in the config", name))
	}
	return diff
}
