package main

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/daemon"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// TestImportJob: the daemon's import job records what the transcripts
// hold and logs it; run again it records nothing more.
func TestImportJob(t *testing.T) {
	t.Parallel()
	ws, projects := claudeWorkspace(t)
	skilltest.AppendLines(t, filepath.Join(projects, "s.jsonl"), toolLine("2026-03-01T10:00:00Z", ws, "Skill", `{"skill":"skillsync"}`))
	cfg, err := config.Load(filepath.Join(ws, "skillsync.yaml"), skillsync.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	job := daemon.ImportJob(skillsync.NewEngine(cfg, skillsync.WithHost(ws, append(environ(t, nil), noClaudeEnv...))).Daemon(), "@every 1h", slog.New(slog.NewTextHandler(&logs, nil)))
	if job.Name() != "import" || job.Schedule() != "@every 1h" {
		t.Errorf("job %s %q", job.Name(), job.Schedule())
	}
	for i := 0; i < 2; i++ {
		if err := job.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if u := usageOf(t, ws)["marketplace:builtin/skillsync"]; u.UseCount != 1 || u.LastSource != "import" {
		t.Errorf("usage = %+v", u)
	}
	if !strings.Contains(logs.String(), "agent=claude files=1 uses=1") || !strings.Contains(logs.String(), "agent=claude files=0 uses=0") {
		t.Errorf("logs:\n%s", logs.String())
	}
}
