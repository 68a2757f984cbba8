package skillsync

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// TestStampMovesWithNestedSkillsOnly: the stamp a server reloads on moves
// when a skill deep in a layer is added or its SKILL.md changes, and stays
// when only the layer's own records (usage, audit) do.
func TestStampMovesWithNestedSkillsOnly(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	e := NewEngine(&config.Config{Workspace: ws})
	deep := filepath.Join(ws, "skills", "team", "docs")
	skilltest.Skill(t, deep, "notes", "Take notes.", nil)
	stamp := func() string {
		t.Helper()
		s, err := e.Stamp()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := stamp()
	skilltest.WriteFile(t, filepath.Join(ws, "skills", ".usage.json"), `{"version":2,"skills":{}}`)
	skilltest.WriteFile(t, filepath.Join(ws, "skills", ".audit", "2026-01-01.jsonl"), "{}\n")
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
	if stamp() == changed {
		t.Error("the stamp did not move when a nested skill was added")
	}
}
