package mcp

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/drafts"
	"github.com/skillsync/skillsync/internal/mcptest"
	"github.com/skillsync/skillsync/skill"
	"github.com/skillsync/skillsync/workspace"
)

// proposingWorkspace is a dirWorkspace whose drafts are a real drafts
// folder beside its skills.
type proposingWorkspace struct {
	*dirWorkspace
	folder *drafts.Folder
}

func (p *proposingWorkspace) ProposeSkill(ctx context.Context, name string, files map[string]string) (drafts.Draft, error) {
	data := map[string][]byte{}
	for k, v := range files {
		data[k] = []byte(v)
	}
	return p.folder.ProposeFiles(ctx, name, data, time.Now())
}

func TestMCPProposeSkill(t *testing.T) {
	t.Parallel()
	ws := fixture(t)
	l := workspace.New(t.TempDir(), "")
	// The drafts live in the very folder the catalog reads, as in a real
	// workspace: discovery must leave them out.
	l.Root = filepath.Dir(ws.dir)
	ws.dir = l.SkillsDir()
	writeSkill(t, ws.dir, "pdf", "Extract text and tables from PDF files", "# PDF\n", nil)
	p := &proposingWorkspace{dirWorkspace: ws, folder: drafts.NewFolder(l, 1<<20)}
	cs := connect(t, newServer(t, p, Options{}))

	var out proposeOutput
	res := mcptest.Call(t, cs, "propose_skill", map[string]any{"name": "notes", "files": map[string]any{
		"SKILL.md":       "---\nname: notes\ndescription: Take notes while working.\n---\n# Notes\n",
		"scripts/new.sh": "#!/bin/sh\necho note\n",
	}}, &out)
	if res.IsError || !out.Valid || out.Draft != filepath.Join(l.DraftsDir(), "notes") || !strings.Contains(out.Message, "skillsync promote notes") {
		t.Fatalf("propose_skill = %+v (%s)", out, mcptest.Text(res))
	}
	ws.touch()
	var list listOutput
	mcptest.Call(t, cs, "list_skills", nil, &list)
	for _, s := range list.Skills {
		if s.Name == "notes" {
			t.Error("a draft is in list_skills")
		}
	}

	out = proposeOutput{}
	mcptest.Call(t, cs, "propose_skill", map[string]any{"name": "Loud", "files": map[string]any{"SKILL.md": "---\nname: Loud\ndescription: x\n---\n"}}, &out)
	if out.Valid || !slices.ContainsFunc(out.Problems, func(p skill.Problem) bool { return p.Rule == "name-not-lowercase" }) {
		t.Errorf("a draft with a problem = %+v", out)
	}
	mcptest.ToolError(t, mcptest.Call(t, cs, "propose_skill", map[string]any{"name": "notes", "files": map[string]any{"SKILL.md": "x"}}, nil), "waiting already")
	mcptest.ToolError(t, mcptest.Call(t, cs, "propose_skill", map[string]any{"name": "escape", "files": map[string]any{"SKILL.md": "x", "../../x": "y"}}, nil), "file path")
	mcptest.ToolError(t, mcptest.Call(t, cs, "propose_skill", map[string]any{"name": "empty"}, nil))

	// Nothing the server offers promotes.
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(tool.Name, "promote") || strings.Contains(tool.Name, "reject") {
			t.Errorf("the server offers %s", tool.Name)
		}
	}
}
