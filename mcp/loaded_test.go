package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillsync/skillsync/internal/mcptest"
)

// TestMCPLoadedSkillsIsBounded: loaded_skills gives back the skills of a
// session, the most recent first, until four times MaxChars are spent,
// and names every other one with the load_skill call that gets it back,
// which then sends it in full as no new use. Before, it gave back every
// skill of the ledger, each up to MaxChars and all of it twice (the text
// and the structured copy): 20 skills of the default 24,000 characters
// made an answer near a megabyte.
func TestMCPLoadedSkillsIsBounded(t *testing.T) {
	t.Parallel()
	const maxChars = 1000
	budget := 4 * maxChars
	ws := newDirWorkspace(t)
	writeSkill(t, ws.dir, "tiny", "A short skill", "# Tiny\nDo it.\n", nil)
	var big []string
	for i := range 10 {
		name := fmt.Sprintf("big-%02d", i)
		big = append(big, name)
		writeSkill(t, ws.dir, name, "A long skill", strings.Repeat(fmt.Sprintf("Step of %s: do the next thing.\n", name), 3*maxChars/30), nil)
	}
	s := newServer(t, ws, Options{MaxChars: maxChars})
	cs := connect(t, s)
	sent := map[string]string{}
	for _, name := range append([]string{"tiny"}, big...) {
		var out loadOutput
		if res := mcptest.Call(t, cs, "load_skill", map[string]any{"name": name}, &out); res.IsError || out.Body == "" {
			t.Fatalf("load_skill %s: %s", name, mcptest.Text(res))
		}
		sent[name] = out.Body
	}

	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "loaded_skills"})
	if err != nil || res.IsError {
		t.Fatal(err, mcptest.Text(res))
	}
	answer, _ := json.Marshal(res)
	// Decoded on its own, so that the test also builds against the
	// loaded_skills that had no omitted field, and fails there.
	var loaded struct {
		Skills  []loadedSkill
		Omitted []string
	}
	data, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(data, &loaded); err != nil {
		t.Fatal(err)
	}
	spent := 0
	var given []string
	for _, ls := range loaded.Skills {
		spent += utf8.RuneCountInString(ls.Name) + utf8.RuneCountInString(ls.Description) + utf8.RuneCountInString(ls.Body)
		given = append(given, ls.Name)
		if ls.Body != sent[ls.Name] {
			t.Errorf("loaded_skills gave %s as %.60q, load_skill sent %.60q", ls.Name, ls.Body, sent[ls.Name])
		}
	}
	// Written twice, with JSON's escapes and the names of what was left
	// out: within twice the budget and some.
	if spent > budget || len(answer) > 2*budget+2048 {
		t.Errorf("loaded_skills spent %d characters of a %d budget; the answer is %d bytes", spent, budget, len(answer))
	}
	// The most recent first, as many as fit; a small one loaded long ago
	// still fits after the big ones that did not.
	wantGiven := []string{"big-09", "big-08", "big-07", "tiny"}
	wantOmitted := []string{"big-06", "big-05", "big-04", "big-03", "big-02", "big-01", "big-00"}
	if !slices.Equal(given, wantGiven) || !slices.Equal(loaded.Omitted, wantOmitted) {
		t.Errorf("loaded_skills gave %v and left out %v; want %v and %v", given, loaded.Omitted, wantGiven, wantOmitted)
	}
	text := mcptest.Text(res)
	line := text[strings.LastIndex(text, "\n")+1:]
	for _, name := range wantOmitted {
		if !strings.Contains(line, name) || strings.Contains(text, fmt.Sprintf("<skill name=%q>", name)) {
			t.Errorf("the text does not name %s as left out on its last line %q", name, line)
		}
	}
	if !strings.Contains(line, "load_skill") {
		t.Errorf("the text does not say how to get what was left out: %q", line)
	}

	// The fix it names works: load_skill sends a skill left out in full,
	// though it is in the ledger, and counts no second use.
	var again loadOutput
	mcptest.Call(t, cs, "load_skill", map[string]any{"name": "big-00"}, &again)
	if again.AlreadyLoaded || again.Body != sent["big-00"] {
		t.Errorf("load_skill of a skill loaded_skills left out = %+v", again)
	}
	if uses, _ := ws.counts("big-00"); uses != 1 {
		t.Errorf("big-00: %d uses, want 1: getting it back is no new use", uses)
	}
	// Sent again, it is owed no more; one loaded_skills gave back never
	// was.
	for _, name := range []string{"big-00", "big-09"} {
		again = loadOutput{}
		if mcptest.Call(t, cs, "load_skill", map[string]any{"name": name}, &again); !again.AlreadyLoaded {
			t.Errorf("load_skill %s after loaded_skills sent it: %+v", name, again)
		}
	}
}

// TestMCPOwedSkillsOutlastTheLedgersRoom: a skill loaded_skills left out
// stays in the ledger while the agent loads other skills first, so that
// getting it back, as the answer said to, is still no new use. Before,
// the oldest entry fell out of a full ledger whether owed or not, and the
// skills left out are the oldest: one new load, and the next load_skill
// of big-00 counted a second use.
func TestMCPOwedSkillsOutlastTheLedgersRoom(t *testing.T) {
	t.Parallel()
	const maxChars, ledger = 1000, 6
	ws := newDirWorkspace(t)
	var names []string
	for i := range ledger + 1 {
		name := fmt.Sprintf("big-%02d", i)
		names = append(names, name)
		writeSkill(t, ws.dir, name, "A long skill", strings.Repeat(fmt.Sprintf("Step of %s: do the next thing.\n", name), 3*maxChars/30), nil)
	}
	s := newServer(t, ws, Options{MaxChars: maxChars, LedgerSize: ledger})
	cs := connect(t, s)
	load := func(name string) loadOutput {
		t.Helper()
		var out loadOutput
		if res := mcptest.Call(t, cs, "load_skill", map[string]any{"name": name}, &out); res.IsError {
			t.Fatalf("load_skill %s: %s", name, mcptest.Text(res))
		}
		return out
	}
	for _, name := range names[:ledger] {
		load(name)
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "loaded_skills"})
	if err != nil || res.IsError {
		t.Fatal(err, mcptest.Text(res))
	}
	if text := mcptest.Text(res); !strings.Contains(text[strings.LastIndex(text, "\n")+1:], "big-00") {
		t.Fatalf("loaded_skills did not leave big-00 out: %q", text)
	}
	load(names[ledger]) // the ledger was full
	if again := load("big-00"); again.AlreadyLoaded || again.Body == "" {
		t.Errorf("load_skill of big-00, which loaded_skills left out = %+v", again)
	}
	if uses, _ := ws.counts("big-00"); uses != 1 {
		t.Errorf("big-00: %d uses, want 1: getting back a skill loaded_skills left out is no new use", uses)
	}
}
