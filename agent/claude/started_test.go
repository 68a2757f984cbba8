package claude

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The folders a project folder's name may stand for are the ones that
// exist: "-" stands for "/", "." and more.
func TestFoldersNamed(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, d := range []string{"sub/x", "sub.x", "a-b/c", "a/b/c", "plain"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "plain"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rest string
		want []string
	}{
		{"-sub-x", []string{"sub.x", "sub/x"}},
		{"-a-b-c", []string{"a-b/c", "a/b/c"}},
		{"-plain", []string{"plain"}},
		{"-link", nil},
		{"-nothing", nil},
		{"", nil},
	} {
		var got []string
		for _, d := range foldersNamed(root, tc.rest, maxStartDepth) {
			rel, _ := filepath.Rel(root, d)
			got = append(got, filepath.ToSlash(rel))
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("foldersNamed(%q) = %q, want %q", tc.rest, got, tc.want)
		}
	}
}

// TestImportPassesOverAnotherProjectsSubfolder: a project whose folder
// name is the workspace's (my.ws for my_ws), or that of a folder inside
// it (my_ws-b for my_ws/b), is another project also once its session went
// into a folder below it; a session of the workspace that went elsewhere
// is still the workspace's.
func TestImportPassesOverAnotherProjectsSubfolder(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	ws := filepath.Join(parent, "my_ws")
	if err := os.MkdirAll(filepath.Join(ws, "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	projects := t.TempDir()
	folder := FolderName(ws)
	dotted := filepath.Join(parent, "my.ws")
	transcript(t, projects, folder, "a.jsonl",
		skillLine("2026-03-01T10:00:00Z", dotted, "t1", `{"skill":"pdf"}`),
		skillLine("2026-03-01T10:00:01Z", filepath.Join(dotted, "src"), "t2", `{"skill":"pdf"}`))
	sibling := filepath.Join(parent, "my_ws-b")
	transcript(t, projects, FolderName(sibling), "b.jsonl",
		skillLine("2026-03-01T10:00:02Z", sibling, "t3", `{"skill":"pdf"}`),
		skillLine("2026-03-01T10:00:03Z", filepath.Join(sibling, "src", "deep"), "t4", `{"skill":"pdf"}`))
	// The workspace's own session, gone elsewhere: still its own.
	transcript(t, projects, folder, "c.jsonl",
		skillLine("2026-03-01T10:00:04Z", ws, "t5", `{"skill":"xlsx"}`),
		skillLine("2026-03-01T10:00:05Z", "/srv/other", "t6", `{"skill":"docx"}`))
	b, err := New(ws, projects).Import(context.Background(), time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := summary(b.Events), "use:xlsx use:docx"; got != want {
		t.Errorf("events %s, want %s", got, want)
	}
}
