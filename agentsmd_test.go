package skillsync

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/agent/claude"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/materialize"
)

// TestSyncAgentsMD: a targets entry agents_md: AGENTS.md keeps the list
// of skills (what skillsync prompt renders, located relative to the
// file) between skillsync's markers, every other byte of the file as the
// user wrote it; a sync with nothing new leaves the file alone.
func TestSyncAgentsMD(t *testing.T) {
	e, ws := newWorkspace(t, "repositories:\n  - embedded: builtin\ntargets:\n  - dir: .claude/skills\n  - agents_md: AGENTS.md\n")
	skilltest.WriteFile(t, filepath.Join(ws, "skills", "big-tool", "SKILL.md"), "---\nname: Big Tool\ndescription: A workspace skill with a space in its name.\n---\n")
	agentsMD := filepath.Join(ws, "AGENTS.md")
	user := "# Rules\r\n\r\nRun make check before a commit.\r\n"
	skilltest.WriteFile(t, agentsMD, user)
	r := mustSync(t, e, SyncOptions{})
	got := skilltest.ReadFile(t, agentsMD)
	// The user's lines end in \r\n, and so do the block's.
	if !strings.HasPrefix(got, user+"\r\n"+materialize.AgentsMDBegin+"\r\n") || !strings.HasSuffix(got, materialize.AgentsMDEnd+"\r\n") ||
		strings.Count(got, "\n") != strings.Count(got, "\r\n") {
		t.Fatalf("AGENTS.md:\n%q", got)
	}
	for _, want := range []string{
		"<available_skills>", "<name>\nskillsync\n</name>",
		"<location>\n.skills-cache/builtin/skillsync/SKILL.md\n</location>",
		"<name>\nBig Tool\n</name>", "<location>\nskills/big-tool/SKILL.md\n</location>",
	} {
		if !strings.Contains(strings.ReplaceAll(got, "\r\n", "\n"), want) {
			t.Errorf("AGENTS.md lacks %q:\n%s", want, got)
		}
	}
	if len(r.Targets) != 2 || r.Targets[1].Dir != agentsMD || r.Targets[1].Written != 1 {
		t.Errorf("report targets %+v", r.Targets)
	}
	// The skill with a space went to its normalized folder, with a warning.
	if !skilltest.Exists(filepath.Join(ws, ".claude", "skills", "big-tool", "SKILL.md")) {
		t.Error("Big Tool is not in .claude/skills/big-tool")
	}
	warned := false
	for _, w := range r.Warnings {
		warned = warned || strings.Contains(w, `"Big Tool"`) && strings.Contains(w, "workspace") && strings.Contains(w, "big-tool")
	}
	if !warned {
		t.Errorf("no warning names Big Tool, its layer and its folder: %q", r.Warnings)
	}
	// Nothing new: the file is not written.
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(agentsMD, old, old); err != nil {
		t.Fatal(err)
	}
	r = mustSync(t, e, SyncOptions{})
	if info, err := os.Stat(agentsMD); err != nil || !info.ModTime().Equal(old) || skilltest.ReadFile(t, agentsMD) != got || r.Targets[1].Written != 0 {
		t.Errorf("a sync with nothing new touched AGENTS.md (%v)", err)
	}
	// The user writes below the block; a skill goes; only the block changes.
	skilltest.WriteFile(t, agentsMD, got+"More rules.\r\n")
	if err := os.RemoveAll(filepath.Join(ws, "skills", "big-tool")); err != nil {
		t.Fatal(err)
	}
	mustSync(t, e, SyncOptions{})
	after := skilltest.ReadFile(t, agentsMD)
	if strings.Contains(after, "Big Tool") || !strings.HasPrefix(after, user+"\r\n"+materialize.AgentsMDBegin) || !strings.HasSuffix(after, materialize.AgentsMDEnd+"\r\nMore rules.\r\n") {
		t.Errorf("AGENTS.md after the skill went:\n%s", after)
	}
}

// TestSyncAgentsMDCreatesAndRefusesLinks: a missing AGENTS.md is made; one
// that is a link out of the workspace is refused alone, nothing written
// through it, as a linked target folder is, while the cache is synced.
func TestSyncAgentsMDCreatesAndRefusesLinks(t *testing.T) {
	e, ws := newWorkspace(t, "repositories:\n  - embedded: builtin\ntargets:\n  - agents_md: AGENTS.md\n")
	mustSync(t, e, SyncOptions{})
	if got := skilltest.ReadFile(t, filepath.Join(ws, "AGENTS.md")); !strings.HasPrefix(got, materialize.AgentsMDBegin+"\n") {
		t.Errorf("new AGENTS.md:\n%s", got)
	}
	e, ws = newWorkspace(t, "repositories:\n  - embedded: builtin\ntargets:\n  - agents_md: AGENTS.md\n")
	outside := filepath.Join(t.TempDir(), "AGENTS.md")
	skilltest.WriteFile(t, outside, "not yours\n")
	if err := os.Symlink(outside, filepath.Join(ws, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Sync(t.Context(), SyncOptions{}); err == nil || !strings.Contains(err.Error(), "outside the workspace") {
		t.Errorf("sync through a link out of the workspace: %v", err)
	}
	if skilltest.ReadFile(t, outside) != "not yours\n" || !skilltest.Exists(filepath.Join(ws, "skillsync.lock")) {
		t.Error("the sync wrote through the link, or the refused file stopped it")
	}
}

// TestImportFindsNormalizedFolders: a read of a skill's SKILL.md in a
// target counts for that skill when its folder there is its normalized
// name, not its name.
func TestImportFindsNormalizedFolders(t *testing.T) {
	e, ws := newWorkspace(t, "targets:\n  - dir: .claude/skills\n")
	skilltest.WriteFile(t, filepath.Join(ws, "skills", "big-tool", "SKILL.md"), "---\nname: Big Tool\ndescription: A skill with a space in its name.\n---\n")
	mustSync(t, e, SyncOptions{})
	read := filepath.Join(ws, ".claude", "skills", "big-tool", "SKILL.md")
	if !skilltest.Exists(read) {
		t.Fatal("Big Tool is not in its normalized folder")
	}
	projects := t.TempDir()
	transcript := filepath.Join(projects, claude.FolderName(ws), "s.jsonl")
	skilltest.AppendLines(t, transcript, claudeLine(time.Now().Add(-time.Minute), ws, "Read", fmt.Sprintf(`{"file_path":%q}`, read)))
	r, err := e.ImportUsage(t.Context(), claude.New(ws, projects), time.Time{})
	if err != nil || r.Views != 1 {
		t.Errorf("import of a read in the normalized folder: %+v %v", r, err)
	}
}
