package mcp

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillsync/skillsync/drafts"
	"github.com/skillsync/skillsync/skill"
)

// Proposer is a Workspace that takes skills proposed by agents into its
// drafts (skills/_drafts/<name>/). When the Workspace given to New is one,
// the server adds the propose_skill tool. Nothing the server offers
// promotes a draft: promotion is a person's act (skillsync promote), or
// the config's, with promotion.auto.
type Proposer interface {
	// ProposeSkill writes files (slash-separated path to text) as the
	// draft name and returns it, validated strictly. Promoted is set when
	// promotion.auto moved it on at once.
	ProposeSkill(ctx context.Context, name string, files map[string]string) (drafts.Draft, error)
}

type proposeInput struct {
	Name  string            `json:"name" jsonschema:"the skill's name: lowercase letters, digits and hyphens, as in its SKILL.md"`
	Files map[string]string `json:"files" jsonschema:"the skill's files, path inside the skill to text content; SKILL.md (frontmatter with name and description, then the instructions) is required"`
}

type proposeOutput struct {
	Name     string          `json:"name"`
	Draft    string          `json:"draft" jsonschema:"where the draft waits on disk"`
	Valid    bool            `json:"valid" jsonschema:"true when strict validation found no problem; only a valid draft can be promoted"`
	Problems []skill.Problem `json:"problems" jsonschema:"what to fix before the draft can be promoted"`
	Promoted string          `json:"promoted,omitempty" jsonschema:"where promotion.auto took the draft at once, if it did"`
	Message  string          `json:"message"`
}

// addProposeTool adds propose_skill when the workspace takes proposals.
func (s *Server) addProposeTool() {
	p, ok := s.ws.(Proposer)
	if !ok {
		return
	}
	closed, additive := false, false
	sdk.AddTool(s.mcp, &sdk.Tool{
		Name:  "propose_skill",
		Title: "Propose a skill",
		Description: "Propose a new skill, or a new version of one, from what you learned solving a task: " +
			"its files go to the workspace's drafts, where a person reviews and promotes it (or rejects it). " +
			"It is not available to anyone until then. Proposing a name that already has a draft waiting is refused.",
		Annotations: &sdk.ToolAnnotations{DestructiveHint: &additive, OpenWorldHint: &closed},
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in proposeInput) (*sdk.CallToolResult, proposeOutput, error) {
		if strings.TrimSpace(in.Name) == "" || len(in.Files) == 0 {
			return nil, proposeOutput{}, fmt.Errorf("give a name and files, with SKILL.md among them")
		}
		dr, err := p.ProposeSkill(ctx, in.Name, in.Files)
		if err != nil {
			return nil, proposeOutput{}, err
		}
		out := proposeOutput{Name: dr.Name, Draft: dr.Dir, Valid: dr.Valid, Problems: dr.Problems, Promoted: dr.Promoted}
		if out.Problems == nil {
			out.Problems = []skill.Problem{}
		}
		switch {
		case dr.Promoted != "":
			out.Message = fmt.Sprintf("skill %s was promoted to %s at once (promotion.auto)", dr.Name, dr.Promoted)
		case dr.Valid:
			out.Message = fmt.Sprintf("draft %s waits for a person to promote it (skillsync promote %s --approver WHO)", dr.Name, dr.Name)
		default:
			problems := "problems: it cannot be promoted until they are"
			if len(dr.Problems) == 1 {
				problems = "problem: it cannot be promoted until it is"
			}
			out.Message = fmt.Sprintf("draft %s has %d %s fixed", dr.Name, len(dr.Problems), problems)
		}
		return nil, out, nil
	})
}
