package git_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/repository/git"
)

// A skill's tree tells which of its files hold what they held in the
// skill's tree of an earlier fetch, by blob hashes, links followed; it
// cannot tell for a tree the store does not hold or a key of no tree.
func TestSameContent(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/pdf", "Fill PDF forms.")
	up.Write("skills/pdf/same.md", "same", 0o644)
	up.Write("skills/pdf/edited.md", "before", 0o644)
	up.Write("skills/pdf/gone.md", "gone", 0o644)
	up.Write("skills/pdf/run.sh", "#!/bin/sh\n", 0o644)
	up.Symlink("same.md", "skills/pdf/alias.md")
	up.Symlink("same.md", "skills/pdf/moved.md")
	up.Commit("one")
	g := newGit(t, up.URL(), "")
	fetch(t, g)
	key := skillTree(t, g).ContentKey()

	up.Write("skills/pdf/edited.md", "after", 0o644)
	up.Remove("skills/pdf/gone.md")
	up.Write("skills/pdf/new.md", "new", 0o644)
	up.Write("skills/pdf/run.sh", "#!/bin/sh\n", 0o755)
	up.Remove("skills/pdf/moved.md")
	up.Symlink("edited.md", "skills/pdf/moved.md")
	up.Commit("two")
	fetch(t, g)
	now := skillTree(t, g)
	if now.ContentKey() == key {
		t.Fatal("the skill's tree did not change")
	}

	for _, tc := range []struct {
		key, name string
		want      bool
	}{
		{key, "SKILL.md", true},
		{key, "same.md", true},
		{key, "alias.md", true},
		{key, "run.sh", true}, // its mode changed, its content did not
		{key, "edited.md", false},
		{key, "moved.md", false}, // a link that leads elsewhere now
		{key, "gone.md", false},
		{key, "new.md", false},
		{key, ".", false},
		{key, "../pdf/same.md", false},
		{"git-tree:" + strings.Repeat("0", 40), "same.md", false},
		{"git-tree:nothex", "same.md", false},
		{strings.Replace(key, "git-tree:", "tree:", 1), "same.md", false},
		{"", "same.md", false},
	} {
		if got := repository.SameContent(now, tc.key, tc.name); got != tc.want {
			t.Errorf("SameContent(%q, %q) = %v, want %v", tc.key, tc.name, got, tc.want)
		}
	}
}

// skillTree is the pdf skill's folder at g's last fetch.
func skillTree(t *testing.T, g *git.Git) *git.TreeFS {
	t.Helper()
	root, err := g.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sub, err := root.Sub("skills/pdf")
	if err != nil {
		t.Fatal(err)
	}
	return sub.(*git.TreeFS)
}

// A folder of more entries than a scan is used for (a team's skills/)
// is looked up through its index: every skill's files are found, read
// and compared, and a name it lacks is not there.
func TestTreeFSInAFolderOfManySkills(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	const n = 150
	for i := range n {
		up.Skill(fmt.Sprintf("skills/s%03d", i), fmt.Sprintf("Skill %d.", i))
	}
	up.Commit("many")
	g := newGit(t, up.URL(), "")
	fetch(t, g)
	root, err := g.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		data, err := fs.ReadFile(root, fmt.Sprintf("skills/s%03d/SKILL.md", i))
		if err != nil || !strings.Contains(string(data), fmt.Sprintf("Skill %d.", i)) {
			t.Fatalf("skills/s%03d/SKILL.md: %q %v", i, data, err)
		}
	}
	if _, err := fs.Stat(root, "skills/s150/SKILL.md"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a skill the folder lacks: %v", err)
	}
	if skills := names(t, g); len(skills) != n {
		t.Errorf("%d skills found, want %d", len(skills), n)
	}
}
