package skill

import (
	"slices"
	"testing"
	"testing/fstest"
)

func TestGitName(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		elem string
		want bool
	}{
		{".git", true},
		{".GIT", true},
		{".Git", true},
		{".git.", true},
		{".git ", true},
		{".git. .", true},
		{".git::$INDEX_ALLOCATION", true},
		{"GIT~1", true},
		{"git~1", true},
		{".gitignore", false},
		{".github", false},
		{".gitmodules", false},
		{"git", false},
		{"..git", false},
		{"a.git", false},
		{".git2", false},
		{"git~2", false},
		{"", false},
	} {
		if got := GitName(tt.elem); got != tt.want {
			t.Errorf("GitName(%q) = %v, want %v", tt.elem, got, tt.want)
		}
	}
	if !GitPath("scripts/.GIT/config") || GitPath("scripts/.github/ci.yml") {
		t.Error("GitPath does not look at every element")
	}
}

// TestListFilesLeavesOutGitFolders: nothing git would take for a
// repository's folder reaches a listing, so no copy of the skill holds a
// config whose core.fsmonitor git would run. Only an exact .git (a
// local clone, a submodule) goes without a warning.
func TestListFilesLeavesOutGitFolders(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"SKILL.md":                 {Data: []byte("x")},
		".gitignore":               {Data: []byte("*.tmp")},
		".git":                     {Data: []byte("gitdir: assets/repo\n")},
		"assets/repo/config":       {Data: []byte("[core]\n\tfsmonitor = evil\n")},
		".GIT/config":              {Data: []byte("[core]\n\tfsmonitor = evil\n")},
		"scripts/.Git":             {Data: []byte("gitdir: ../assets/repo\n")},
		"scripts/run.sh":           {Data: []byte("echo")},
		"references/.git./config":  {Data: []byte("x")},
		"references/GIT~1/HEAD":    {Data: []byte("x")},
		"references/checkout/.git": {Data: []byte("gitdir: elsewhere\n")},
	}
	files, problems := ListFiles(fsys, "skills/pdf", 0)
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	want := []string{".gitignore", "SKILL.md", "assets/repo/config", "scripts/run.sh"}
	if !slices.Equal(paths, want) {
		t.Errorf("listed %v, want %v", paths, want)
	}
	var warned []string
	for _, p := range problems {
		if p.Rule == "git-folder" && p.Level == Warning {
			warned = append(warned, p.File)
		}
	}
	wantWarned := []string{"skills/pdf/.GIT", "skills/pdf/references/.git.", "skills/pdf/references/GIT~1", "skills/pdf/scripts/.Git"}
	if !slices.Equal(warned, wantWarned) || len(problems) != len(wantWarned) {
		t.Errorf("warnings for %v (problems %v), want %v", warned, problems, wantWarned)
	}
}
