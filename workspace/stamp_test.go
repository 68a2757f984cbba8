package workspace_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/workspace"
)

// TestStampMovesWithNestedSkillsOnly: the stamp a server reloads on moves
// when a skill deep in a layer is added or its SKILL.md changes, and stays
// when only the layer's own records (usage, audit) do.
func TestStampMovesWithNestedSkillsOnly(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	layer := filepath.Join(ws, "skills")
	manifest := filepath.Join(ws, ".skills-cache", ".manifest.json")
	deep := filepath.Join(layer, "team", "docs")
	skilltest.Skill(t, deep, "notes", "Take notes.", nil)
	stamp := func() string { return workspace.Stamp([]string{manifest}, []string{layer}, 6) }
	before := stamp()
	skilltest.WriteFile(t, filepath.Join(layer, ".usage.json"), `{"version":2,"skills":{}}`)
	skilltest.WriteFile(t, filepath.Join(layer, ".audit", "2026-01-01.jsonl"), "{}\n")
	if got := stamp(); got != before {
		t.Error("the stamp moved for the usage file and the audit log")
	}
	md := filepath.Join(deep, "notes", "SKILL.md")
	later := time.Now().Add(time.Minute)
	skilltest.WriteFile(t, md, skilltest.SkillMD("notes", "Take better notes."))
	if err := os.Chtimes(md, later, later); err != nil {
		t.Fatal(err)
	}
	changed := stamp()
	if changed == before {
		t.Error("the stamp did not move when a nested SKILL.md changed")
	}
	skilltest.Skill(t, deep, "todo", "Keep a list.", nil)
	added := stamp()
	if added == changed {
		t.Error("the stamp did not move when a nested skill was added")
	}
	skilltest.WriteFile(t, manifest, "{}")
	if stamp() == added {
		t.Error("the stamp did not move when the manifest was written")
	}
}
