package skillsync

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillsync/skillsync/config"
)

// BenchmarkCatalogBuild builds the catalog of a workspace whose skills/
// holds 10,000 skills: discovery, SKILL.md parsing and the merge.
func BenchmarkCatalogBuild(b *testing.B) {
	ws := b.TempDir()
	for i := 0; i < 10000; i++ {
		dir := filepath.Join(ws, "skills", fmt.Sprintf("skill-%05d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		md := fmt.Sprintf("---\nname: skill-%05d\ndescription: Benchmark skill %d.\ntags: [bench]\n---\n# Skill %d\n", i, i, i)
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	e := NewEngine(&config.Config{Workspace: ws})
	ctx := context.Background()
	if cat, err := e.Catalog(ctx); err != nil || len(cat.Winners) != 10000 {
		b.Fatalf("catalog: %v", err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.Catalog(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSyncCorpus syncs the corpus named by $SKILLSYNC_PROFILE_CORPUS
// (a repository bench/corpus made) into an empty workspace at tag v1, then
// moves it to v2, once per iteration, so go test -cpuprofile shows where a
// cold sync and a 1% sync spend their time:
//
//	SKILLSYNC_PROFILE_CORPUS=bench/out/medium/corpus go test -run '^$' -bench SyncCorpus -benchtime 1x -cpuprofile cpu.prof .
//
// Without the variable it is skipped.
func BenchmarkSyncCorpus(b *testing.B) {
	corpus := os.Getenv("SKILLSYNC_PROFILE_CORPUS")
	if corpus == "" {
		b.Skip("set SKILLSYNC_PROFILE_CORPUS to a bench corpus to profile a sync")
	}
	for b.Loop() {
		ws := b.TempDir()
		for _, ref := range []string{"v1", "v2"} {
			text := "repositories:\n  - name: corpus\n    git: file://" + corpus + "\n    ref: " + ref + "\n"
			path := filepath.Join(ws, config.FileName)
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				b.Fatal(err)
			}
			cfg, err := config.Load(path, Kinds())
			if err != nil {
				b.Fatal(err)
			}
			r, err := NewEngine(cfg, WithGitStore(filepath.Join(ws, ".git-store"))).Sync(context.Background(), SyncOptions{})
			if err != nil {
				b.Fatalf("sync %s: %v %+v", ref, err, r)
			}
		}
	}
}
