package main

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/daemon"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// TestDaemonLoadsAConfigEditedAsItStarts: a config edited once the
// engine loaded it, before the daemon noted what it loaded, is loaded
// again before the first sync. The daemon stat'ed the file after the
// load and took the edit for loaded: it synced the config as it was, the
// added source never came, until the next edit.
func TestDaemonLoadsAConfigEditedAsItStarts(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	file := filepath.Join(ws, config.FileName)
	skilltest.Skill(t, filepath.Join(ws, "extra"), "pdf", "Read PDF files.", nil)
	head := "targets:\n  - dir: .claude/skills\nschedule:\n  sync: \"@every 1h\"\n  curate: \"@every 1h\"\n  import: \"@every 1h\"\n"
	skilltest.WriteFile(t, file, head+"repositories: []\n")
	store := filepath.Join(t.TempDir(), "git-store")
	var opens atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- daemon.Serve(ctx, daemon.Config{Open: func(context.Context) (daemon.Engine, error) {
			cfg, err := config.Load(file, skillsync.Kinds())
			if err != nil {
				return nil, err
			}
			if opens.Add(1) == 1 {
				if err := os.WriteFile(file, []byte(head+"repositories:\n  - name: extra\n    dir: extra\n"), 0o644); err != nil {
					return nil, err
				}
			}
			return skillsync.NewEngine(cfg, skillsync.WithGitStore(store), skillsync.WithActor("daemon")).Daemon(), nil
		}})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	waitUntil(t, "the skill of the source the edit added", func() bool {
		_, err := os.Stat(filepath.Join(ws, ".claude", "skills", "pdf", "SKILL.md"))
		return err == nil
	})
	if n := opens.Load(); n != 2 {
		t.Errorf("the config was loaded %d times, want 2", n)
	}
}
