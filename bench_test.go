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
