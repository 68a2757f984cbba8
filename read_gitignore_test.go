package skillsync

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/gittest"
)

// TestReadLeavesOutGitIgnored: a workspace skill's file that git ignores
// (the author's .env) is not read through the catalog, which skillsync
// read and serve's file pages open, as sync leaves it out of the targets:
// before, a page's URL or a read served the secret.
func TestReadLeavesOutGitIgnored(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, "main")
	repo.Write(config.FileName, "workspace: .\n", 0)
	repo.Write(".gitignore", ".env\n", 0)
	repo.Skill("skills/tool", "A tool.")
	repo.Write("skills/tool/.env", "API_KEY=sk-live-123\n", 0)
	repo.Write("skills/tool/notes.md", "notes\n", 0)
	cfg := loadConfig(t, filepath.Join(repo.Dir, config.FileName))
	home := t.TempDir()
	e := NewEngine(cfg, WithHost(repo.Dir, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}))
	ctx := context.Background()
	if f, _, err := e.Read(ctx, "tool", ".env"); !errors.Is(err, fs.ErrNotExist) {
		if err == nil {
			data, _ := io.ReadAll(f)
			f.Close()
			t.Fatalf("read the ignored .env: %q", data)
		}
		t.Fatalf("read the ignored .env: %v, want not found", err)
	}
	f, _, err := e.Read(ctx, "tool", "notes.md")
	if err != nil {
		t.Fatalf("read notes.md: %v", err)
	}
	f.Close()
}
