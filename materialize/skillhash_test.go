package materialize

import (
	"context"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/skillsync/skillsync/skill"
)

// SkillHash is the manifest's hash: a skill hashed on its own and the
// same skill written into the cache agree.
func TestSkillHashIsTheManifestHash(t *testing.T) {
	t.Parallel()
	s := mkSkill("pdf", map[string]string{"SKILL.md": "---\nname: pdf\n---\n", "scripts/run.sh": "#!/bin/sh\n", "a.txt": ""})
	root := filepath.Join(t.TempDir(), "cache")
	syncOnce(t, root, "r1", s)
	m, err := ReadManifest(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := SkillHash(context.Background(), s.Files, s.List)
	if err != nil {
		t.Fatal(err)
	}
	if want := m.Sources["src"].Skills["pdf"].Hash; got != want || got.IsZero() {
		t.Errorf("SkillHash = %s, manifest = %s", got, want)
	}
}

func TestSkillHashRefusesAFileThatChanged(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{"SKILL.md": {Data: []byte("longer now")}}
	_, err := SkillHash(context.Background(), fsys, []skill.File{{Path: "SKILL.md", Size: 3}})
	if err == nil {
		t.Error("a file whose size differs from its listing was hashed")
	}
}
