package skillsync

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/layering"
)

// benchSkills is how many skills the cache benchmarks sync: the medium
// corpus of bench/run.sh, or $SKILLSYNC_BENCH_SKILLS.
func benchSkills(b *testing.B) int {
	n := 2000
	if v := os.Getenv("SKILLSYNC_BENCH_SKILLS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("SKILLSYNC_BENCH_SKILLS=%q is not a count", v)
		}
	}
	return n
}

// benchRepo is a git repository of n skills of three files each.
func benchRepo(b *testing.B, n int) *gittest.Repo {
	b.Helper()
	up := gittest.NewRepo(b, "main")
	for i := range n {
		name := fmt.Sprintf("skill-%05d", i)
		up.Write("skills/"+name+"/SKILL.md", fmt.Sprintf("---\nname: %s\ndescription: \"Benchmark skill %d: deploy, review and check.\"\nlicense: MIT\n---\n# %s\n", name, i, name), 0o644)
		up.Write("skills/"+name+"/references/notes.md", strings.Repeat("notes ", 100), 0o644)
		up.Write("skills/"+name+"/scripts/run.sh", "#!/bin/sh\necho "+name+"\n", 0o755)
	}
	up.Commit("skills")
	return up
}

// benchWorkspace syncs a repository of n skills into a new workspace and
// returns its config file.
func benchWorkspace(b *testing.B, n int) string {
	b.Helper()
	up := benchRepo(b, n)
	ws := b.TempDir()
	path := filepath.Join(ws, config.FileName)
	if err := os.WriteFile(path, []byte("repositories:\n  - name: corpus\n    git: "+up.URL()+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	r, err := benchEngine(b, path).Sync(context.Background(), SyncOptions{})
	if err != nil || r.Files.Written != 3*n {
		b.Fatalf("sync: %v %+v", err, r.Files)
	}
	return path
}

func benchEngine(b *testing.B, path string) *Engine {
	b.Helper()
	cfg, err := config.Load(path, Kinds())
	if err != nil {
		b.Fatal(err)
	}
	cfg.Global = ""
	return NewEngine(cfg, WithGitStore(filepath.Join(filepath.Dir(path), ".git-store")))
}

// BenchmarkPromptFromCache is what a skillsync prompt process does after
// a sync of 2,000 skills, startup aside: load the config, read the
// catalog from the cache's records, render the prompt.
func BenchmarkPromptFromCache(b *testing.B) {
	n := benchSkills(b)
	path := benchWorkspace(b, n)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		cat, err := benchEngine(b, path).Catalog(ctx)
		if err != nil || len(cat.Winners) != n {
			b.Fatalf("catalog: %v", err)
		}
		if _, err := layering.Prompt(layering.PromptSkills(cat.Winners), layering.PromptXML, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNoOpSync is a sync with nothing new of 2,000 skills: the ref
// listing of the source (a git-upload-pack process), the cache's index
// and skill records, the catalog, usage and lock.
func BenchmarkNoOpSync(b *testing.B) {
	n := benchSkills(b)
	path := benchWorkspace(b, n)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r, err := benchEngine(b, path).Sync(ctx, SyncOptions{})
		if err != nil || r.Files.Written != 0 || r.Files.Unchanged != 3*n {
			b.Fatalf("sync: %v %+v", err, r.Files)
		}
	}
}
