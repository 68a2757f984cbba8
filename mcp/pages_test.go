package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillsync/skillsync/internal/mcptest"
)

// page splits a cut text into what it shows and its [truncated] line.
func page(text string) (shown, marker string) {
	shown, marker, _ = strings.Cut(text, "\n\n[truncated")
	return shown, marker
}

// TestMCPReadSkillFilePages: read_skill_file reads a long file page by
// page, each page's next_offset the next one's offset, until the pages
// give back the whole file; an offset inside a character starts at it,
// and one past the end is refused.
func TestMCPReadSkillFilePages(t *testing.T) {
	t.Parallel()
	ws := newDirWorkspace(t)
	// One-, two-, three- and four-byte characters, so that pages of 1,000
	// characters end at every kind of boundary.
	long := strings.Repeat("aé日🙂\n", 1200)
	writeSkill(t, ws.dir, "pdf", "Extract text from PDF files", "# PDF\n", map[string]string{"reference/long.md": long})
	cs := connect(t, newServer(t, ws, Options{MaxChars: 1000}))

	var whole strings.Builder
	offset, pages := int64(0), 0
	for {
		var out readOutput
		res := mcptest.Call(t, cs, "read_skill_file", map[string]any{"name": "pdf", "path": "reference/long.md", "offset": offset}, &out)
		if res.IsError {
			t.Fatalf("offset %d: %s", offset, mcptest.Text(res))
		}
		pages++
		shown, marker := page(out.Text)
		if out.Offset != offset || out.Size != int64(len(long)) || utf8.RuneCountInString(shown) > 1000 || mcptest.Text(res) != out.Text {
			t.Fatalf("page at %d: offset %d size %d, %d characters", offset, out.Offset, out.Size, utf8.RuneCountInString(shown))
		}
		whole.WriteString(shown)
		if !out.Truncated {
			if marker != "" || out.NextOffset != 0 || out.Remaining != 0 {
				t.Errorf("the last page: %q, next %d, remaining %d", marker, out.NextOffset, out.Remaining)
			}
			break
		}
		if out.NextOffset != offset+int64(len(shown)) || out.Remaining != out.Size-out.NextOffset ||
			!strings.Contains(marker, "offset="+strconv.FormatInt(out.NextOffset, 10)+") reads on]") || !strings.Contains(marker, strconv.FormatInt(out.Remaining, 10)+" bytes are left") {
			t.Fatalf("page at %d: next %d, remaining %d, %q", offset, out.NextOffset, out.Remaining, marker)
		}
		offset = out.NextOffset
	}
	if whole.String() != long || pages != 6 {
		t.Errorf("%d pages gave back %d of %d bytes", pages, whole.Len(), len(long))
	}

	// An offset inside 🙂 (bytes 6 to 9 of each line) starts at it.
	var out readOutput
	mcptest.Call(t, cs, "read_skill_file", map[string]any{"name": "pdf", "path": "reference/long.md", "offset": 8}, &out)
	if out.Offset != 6 || !strings.HasPrefix(out.Text, "🙂\naé日") {
		t.Errorf("offset 8 read from %d: %.12q", out.Offset, out.Text)
	}
	// The end of the file is nothing left; past it is an error.
	out = readOutput{}
	res := mcptest.Call(t, cs, "read_skill_file", map[string]any{"name": "pdf", "path": "reference/long.md", "offset": len(long)}, &out)
	if res.IsError || out.Text != "" || out.Truncated || !strings.Contains(mcptest.Text(res), "nothing is left") {
		t.Errorf("offset at the end: %+v %s", out, mcptest.Text(res))
	}
	mcptest.ToolError(t, mcptest.Call(t, cs, "read_skill_file", map[string]any{"name": "pdf", "path": "reference/long.md", "offset": len(long) + 1}, nil),
		"offset 13201 is not in the file, which is 13200 bytes")
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "read_skill_file", Arguments: map[string]any{"name": "pdf", "path": "SKILL.md", "offset": -1}})
	if err == nil && !res.IsError {
		t.Errorf("offset -1 was read: %s", mcptest.Text(res))
	}
	if _, views := ws.counts("pdf"); views != pages+2 {
		t.Errorf("%d pages and 2 more reads recorded %d views", pages, views)
	}
}

// TestMCPLoadSkillBoundsTheBody: a SKILL.md of 4 MB is sent as its first
// 24,000 characters, in the text and the structured copy alike, with the
// read_skill_file call that reads on, and the pages read on from there
// give back the rest; loaded_skills bounds it the same way. Before, the
// answer carried the whole body twice, 8 MB.
func TestMCPLoadSkillBoundsTheBody(t *testing.T) {
	t.Parallel()
	ws := newDirWorkspace(t)
	body := "# Big\n" + strings.Repeat("Step é: do the next thing.\n", 4_000_000/28)
	writeSkill(t, ws.dir, "big", "A skill with a long body", body, nil)
	s := newServer(t, ws, Options{})
	cs := connect(t, s)

	var out loadOutput
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "load_skill", Arguments: map[string]any{"name": "big"}})
	if err != nil || res.IsError {
		t.Fatal(err, mcptest.Text(res))
	}
	answer, _ := json.Marshal(res)
	data, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	shown, marker := page(out.Body)
	if len(answer) > 200<<10 || utf8.RuneCountInString(shown) != DefaultMaxChars || !strings.HasPrefix(body, shown) ||
		!out.Truncated || !strings.HasSuffix(mcptest.Text(res), out.Body) {
		t.Fatalf("load_skill of a 4 MB body: %d bytes of answer, %d characters shown, truncated %v", len(answer), utf8.RuneCountInString(shown), out.Truncated)
	}
	head := int64(len(skillMD(t, ws, "big")) - len(body))
	if out.NextOffset != head+int64(len(shown)) ||
		!strings.Contains(marker, `read_skill_file(name="big", path="SKILL.md", offset=`+strconv.FormatInt(out.NextOffset, 10)+") reads on]") {
		t.Errorf("load_skill's next offset %d (the body starts at %d), %q", out.NextOffset, head, marker)
	}
	// One page on from there continues the body where it was cut.
	var next readOutput
	mcptest.Call(t, cs, "read_skill_file", map[string]any{"name": "big", "path": "SKILL.md", "offset": out.NextOffset}, &next)
	if more, _ := page(next.Text); !strings.HasPrefix(body, shown+more) || len(more) == 0 || next.Offset != out.NextOffset {
		t.Errorf("read on from %d: offset %d, %.40q", out.NextOffset, next.Offset, more)
	}

	// Loaded again, it is already loaded; changed past the part sent
	// (the same size), it is sent again.
	var again loadOutput
	if mcptest.Call(t, cs, "load_skill", map[string]any{"name": "big"}, &again); !again.AlreadyLoaded {
		t.Error("a second load_skill of the unchanged skill sent it again")
	}
	changed := strings.TrimSuffix(body, "thing.\n") + "THING.\n"
	writeSkill(t, ws.dir, "big", "A skill with a long body", changed, nil)
	ws.touch()
	again = loadOutput{}
	if mcptest.Call(t, cs, "load_skill", map[string]any{"name": "big"}, &again); again.AlreadyLoaded {
		t.Error("a skill changed past its first page was answered already loaded")
	}

	var loaded loadedOutput
	res, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "loaded_skills"})
	if err != nil || res.IsError {
		t.Fatal(err, mcptest.Text(res))
	}
	answer, _ = json.Marshal(res)
	data, _ = json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(data, &loaded); err != nil {
		t.Fatal(err)
	}
	if len(answer) > 200<<10 || len(loaded.Skills) != 1 || loaded.Skills[0].Body != out.Body ||
		!loaded.Skills[0].Truncated || loaded.Skills[0].NextOffset != out.NextOffset || !strings.Contains(mcptest.Text(res), marker) {
		t.Errorf("loaded_skills of a 4 MB body: %d bytes of answer", len(answer))
	}
}

// skillMD returns the SKILL.md of the named skill in ws.
func skillMD(t *testing.T, ws *dirWorkspace, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ws.dir, name, "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
