package skillsync

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/pgtest"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// TestSyncDirSourceLeavesOutGitIgnored: a dir source that is a git
// checkout syncs into the cache and the target without what git ignores
// there (the tester's .env and node_modules/), while a file being written
// that git does not ignore is synced; and a rule added to info/exclude
// between two syncs takes its file out of both, though no file of the
// source changed. Without the rules the secret reached the target, which
// teams commit.
func TestSyncDirSourceLeavesOutGitIgnored(t *testing.T) {
	t.Parallel()
	team := gittest.NewRepo(t, "main")
	team.Skill("skills/tool", "A tool.")
	team.Write(".gitignore", ".env\nnode_modules/\n", 0)
	team.Commit("skills")
	team.Write("skills/tool/.env", "API_KEY=sk-live-123\n", 0)
	team.Write("skills/tool/node_modules/x/i.js", "j\n", 0)
	team.Write("skills/tool/notes.md", "work in progress\n", 0)

	_, ws := workspaceConfig(t, "repositories:\n  - name: team\n    dir: "+team.Dir+"\ntargets:\n  - dir: .claude/skills\n")
	cfg := loadConfig(t, filepath.Join(ws, config.FileName))
	home := t.TempDir()
	e := NewEngine(cfg, WithGitStore(filepath.Join(ws, ".git-store")), WithHost(ws, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}))
	dirs := []string{filepath.Join(ws, ".skills-cache", "team", "tool"), filepath.Join(ws, ".claude", "skills", "tool")}
	check := func(when string, want, gone []string) {
		t.Helper()
		for _, d := range dirs {
			for _, name := range want {
				if !skilltest.Exists(filepath.Join(d, name)) {
					t.Errorf("%s: %s lacks %s", when, d, name)
				}
			}
			for _, name := range gone {
				if _, err := os.Lstat(filepath.Join(d, name)); err == nil {
					t.Errorf("%s: %s holds %s, which git ignores", when, d, name)
				}
			}
		}
	}
	mustSync(t, e, SyncOptions{})
	check("first sync", []string{"SKILL.md", "notes.md"}, []string{".env", "node_modules"})

	skilltest.WriteFile(t, filepath.Join(team.Dir, ".git", "info", "exclude"), "notes.md\n")
	mustSync(t, e, SyncOptions{})
	check("after info/exclude", []string{"SKILL.md"}, []string{".env", "node_modules", "notes.md"})
}

// TestSyncOwnGitignoreOutsideWorkTree: a dir source and the workspace's
// skills/ outside any git work tree are synced without what their own
// .gitignore files leave out (a skill's, or one at the folder's root), as
// publish leaves it out; read does not serve it either. Before, sync read
// such a folder whole and the .env reached the target, which teams
// commit, and read served the layer skill's .env that the layer's
// .gitignore names.
func TestSyncOwnGitignoreOutsideWorkTree(t *testing.T) {
	t.Parallel()
	team := t.TempDir()
	skilltest.Skill(t, team, "tool", "A tool.", map[string]string{
		".gitignore": ".env\n", ".env": "API_KEY=sk-live-123\n", "notes.md": "n\n",
	})
	_, ws := workspaceConfig(t, "repositories:\n  - name: team\n    dir: "+team+"\ntargets:\n  - dir: .claude/skills\n")
	skilltest.WriteFile(t, filepath.Join(ws, "skills", ".gitignore"), "*.env\n")
	skilltest.Skill(t, filepath.Join(ws, "skills"), "mine", "Mine.", map[string]string{
		"prod.env": "API_KEY=sk-live-456\n", "notes.md": "n\n",
	})
	cfg := loadConfig(t, filepath.Join(ws, config.FileName))
	home := t.TempDir()
	e := NewEngine(cfg, WithGitStore(filepath.Join(ws, ".git-store")), WithHost(ws, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}))
	mustSync(t, e, SyncOptions{})
	for _, c := range []struct{ dir, kept, gone string }{
		{filepath.Join(ws, ".skills-cache", "team", "tool"), "notes.md", ".env"},
		{filepath.Join(ws, ".claude", "skills", "tool"), "notes.md", ".env"},
		{filepath.Join(ws, ".claude", "skills", "mine"), "notes.md", "prod.env"},
	} {
		if !skilltest.Exists(filepath.Join(c.dir, c.kept)) {
			t.Errorf("%s lacks %s", c.dir, c.kept)
		}
		if _, err := os.Lstat(filepath.Join(c.dir, c.gone)); err == nil {
			t.Errorf("%s holds %s, which its .gitignore names", c.dir, c.gone)
		}
	}
	ctx := context.Background()
	for _, c := range []struct{ skill, file string }{{"tool", ".env"}, {"mine", "prod.env"}} {
		if f, _, err := e.Read(ctx, c.skill, c.file); !errors.Is(err, fs.ErrNotExist) {
			if err == nil {
				f.Close()
			}
			t.Errorf("read %s %s: %v, want not found", c.skill, c.file, err)
		}
		f, _, err := e.Read(ctx, c.skill, "notes.md")
		if err != nil {
			t.Fatalf("read %s notes.md: %v", c.skill, err)
		}
		f.Close()
	}
}

// TestPublishAndSyncAgreeOnOwnGitignore: one skill folder outside any
// git work tree, published to a postgres source and read as a dir
// source, reaches the cache with the same files both ways: without what
// its own .gitignore files name. Before, publish left the .env out and
// sync copied it.
func TestPublishAndSyncAgreeOnOwnGitignore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := pgtest.Own(t)
	src := t.TempDir()
	tool := skilltest.Skill(t, src, "tool", "A tool.", map[string]string{
		".gitignore": ".env\n/build/\n", ".env": "API_KEY=sk-live-123\n", "build/a.js": "a\n",
		"lib/.gitignore": "*.key\n", "lib/a.key": "k\n", "lib/a.py": "p\n", "notes.md": "n\n", "x.secret": "s\n",
	})
	// A rule of the dir: source's folder, above the skill's: its sync
	// applies it, and so must a publish of the skill.
	skilltest.WriteFile(t, filepath.Join(src, ".gitignore"), "*.secret\n")
	_, ws := workspaceConfig(t, "repositories:\n  - name: team\n    dsn_file: "+c.DSNFile(t, "postgres")+"\n    create: true\n  - name: local\n    dir: "+src+"\n")
	cfg := loadConfig(t, filepath.Join(ws, config.FileName))
	home := t.TempDir()
	e := NewEngine(cfg, WithGitStore(filepath.Join(ws, ".git-store")), WithHost(ws, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}))
	res, err := e.Gate().Publish(ctx, tool, "team", "alice")
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	if want := []string{".env", "build/", "lib/a.key", "x.secret"}; !slices.Equal(res.Ignored.Names, want) {
		t.Errorf("publish left out %q, want %q", res.Ignored.Names, want)
	}
	mustSync(t, e, SyncOptions{})
	want := []string{".gitignore", "SKILL.md", "lib/.gitignore", "lib/a.py", "notes.md"}
	for _, source := range []string{"team", "local"} {
		dir := filepath.Join(ws, ".skills-cache", source, "tool")
		var got []string
		err := filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
			if err == nil && !de.IsDir() {
				rel, _ := filepath.Rel(dir, p)
				got = append(got, filepath.ToSlash(rel))
			}
			return err
		})
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %q, %v; want %q", dir, got, err, want)
		}
	}
}

// TestSymlinkTargetCopiesALayerSkillWithIgnoredFiles: a symlink-mode
// target links a layer's skill only when git ignores nothing in its
// folder; one that holds a file its .gitignore names is copied without
// it. A link showed the agent the whole folder, the .env with it.
func TestSymlinkTargetCopiesALayerSkillWithIgnoredFiles(t *testing.T) {
	t.Parallel()
	_, ws := workspaceConfig(t, "targets:\n  - dir: .claude/skills\n    mode: symlink\n")
	skilltest.Skill(t, filepath.Join(ws, "skills"), "mine", "Mine.", map[string]string{
		".gitignore": "*.env\n", "prod.env": "API_KEY=sk-live-456\n", "notes.md": "n\n",
	})
	skilltest.Skill(t, filepath.Join(ws, "skills"), "clean", "Clean.", map[string]string{"notes.md": "n\n"})
	cfg := loadConfig(t, filepath.Join(ws, config.FileName))
	home := t.TempDir()
	e := NewEngine(cfg, WithGitStore(filepath.Join(ws, ".git-store")), WithHost(ws, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}))
	mustSync(t, e, SyncOptions{})
	target := filepath.Join(ws, ".claude", "skills")
	if _, err := os.Stat(filepath.Join(target, "mine", "prod.env")); err == nil {
		t.Errorf("the agent's folder shows mine/prod.env, which the skill's .gitignore names")
	}
	if !skilltest.Exists(filepath.Join(target, "mine", "notes.md")) {
		t.Errorf("mine/notes.md is not in the target")
	}
	if info, err := os.Lstat(filepath.Join(target, "clean")); err != nil || info.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("clean, with nothing git ignores, is not linked: %v, %v", info, err)
	}
}
