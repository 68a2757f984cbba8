package mcp

import (
	"context"
	"fmt"
	"testing"
	"testing/fstest"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/skill"
)

// catalogWorkspace serves a fixed catalog.
type catalogWorkspace struct{ cat *layering.Catalog }

func (c catalogWorkspace) Catalog(context.Context) (*layering.Catalog, error) { return c.cat, nil }
func (catalogWorkspace) Record(context.Context, string, bool) error           { return nil }
func (catalogWorkspace) Stamp() (string, error)                               { return "fixed", nil }

// bigCatalog makes n skills with varied names, descriptions, tags and
// triggers, a few of them about PDF files.
func bigCatalog(n int) *layering.Catalog {
	topics := []string{"spreadsheet", "release", "kubernetes", "terraform", "invoice", "docker", "postgres", "graphql", "security", "markdown"}
	verbs := []string{"write", "review", "migrate", "debug", "document", "deploy", "test", "refactor"}
	skills := make([]skill.Skill, n)
	for i := range skills {
		topic, verb := topics[i%len(topics)], verbs[(i/len(topics))%len(verbs)]
		name := fmt.Sprintf("%s-%s-%05d", verb, topic, i)
		desc := fmt.Sprintf("%s %s projects: step by step instructions, scripts and checklists for team %d", verb, topic, i%97)
		if i%1000 == 0 {
			name, desc = fmt.Sprintf("pdf-tools-%05d", i), "Extract text and tables from PDF files, fill PDF forms"
		}
		skills[i] = skill.Skill{
			Name: name, Description: desc, Tags: []string{topic, verb}, Triggers: []string{verb + " " + topic},
			Path: name, File: "SKILL.md",
			Files: fstest.MapFS{"SKILL.md": {Data: []byte("---\nname: " + name + "\n---\n# " + name + "\n")}},
		}
	}
	return layering.Build([]layering.Input{{Layer: layering.Marketplace, Source: "team", Skills: skills}}, layering.Options{})
}

// BenchmarkSearchSkills measures one search_skills call over 10,000 skills
// from the client's side: request, search, response, through the SDK's
// JSON-RPC machinery over an in-memory transport.
//
//	go test ./mcp/ -run '^$' -bench SearchSkills -benchmem
func BenchmarkSearchSkills(b *testing.B) {
	s := newServer(b, catalogWorkspace{bigCatalog(10000)}, Options{})
	cs := connect(b, s)
	ctx := context.Background()
	params := &sdk.CallToolParams{Name: "search_skills", Arguments: map[string]any{"query": "pdf forms", "limit": 10}}
	res, err := cs.CallTool(ctx, params) // builds the search index once
	if err != nil || res.IsError || len(res.Content) == 0 {
		b.Fatalf("search: %v %v", err, res)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := cs.CallTool(ctx, params); err != nil {
			b.Fatal(err)
		}
	}
}
