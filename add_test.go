package skillsync

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/repository/git"
)

// TestPreviewWritesNothingInTheWorkspace reads what a repository offers
// through the Go API: the fetch lands in the git store, the workspace
// stays empty but for its config.
func TestPreviewWritesNothingInTheWorkspace(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/pdf", "Fill in PDF forms.")
	up.Write("skills/bad/SKILL.md", "---\nname: bad\n---\n", 0)
	head := up.Commit("first")
	e, ws := newWorkspace(t, "repositories: []\n")
	src, err := config.Entry{Git: up.URL()}.Source(ws, Kinds())
	if err != nil {
		t.Fatal(err)
	}
	offer, err := e.Preview(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if offer.Revision != head || len(offer.Skills) != 1 || offer.Skills[0].Name != "pdf" || len(offer.Problems) != 1 {
		t.Errorf("offer = %+v", offer)
	}
	entries, _ := os.ReadDir(ws)
	var names []string
	for _, en := range entries {
		names = append(names, en.Name())
	}
	if len(names) != 2 || names[0] != ".git-store" || names[1] != config.FileName {
		t.Errorf("the workspace holds %v; want the config and the test's git store only", names)
	}
	if _, err := e.Preview(context.Background(), config.Source{Name: "gone", Kind: git.Kind, Settings: &git.Settings{URL: "file://" + filepath.Join(ws, "nope")}}); err == nil {
		t.Error("a missing remote previewed")
	}
}
