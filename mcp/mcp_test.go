package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillsync/skillsync/internal/mcptest"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/repository"
	dirsource "github.com/skillsync/skillsync/repository/dir"
	"github.com/skillsync/skillsync/skill"
)

// dirWorkspace is a Workspace over one directory of skills read in place,
// as the workspace layer is: real files, real discovery, with the counts
// the engine would record kept in memory.
type dirWorkspace struct {
	dir    string
	hidden []string

	mu       sync.Mutex
	archived map[string]bool
	stamp    int
	stamps   int // calls of Stamp
	reads    int
	uses     map[string]int
	views    map[string]int
}

func newDirWorkspace(t testing.TB) *dirWorkspace {
	return &dirWorkspace{dir: t.TempDir(), archived: map[string]bool{}, uses: map[string]int{}, views: map[string]int{}}
}

func (d *dirWorkspace) Catalog(ctx context.Context) (*layering.Catalog, error) {
	d.mu.Lock()
	d.reads++
	d.mu.Unlock()
	skills, problems, err := dirsource.NewLocal("workspace", d.dir, repository.Options{}).Skills(ctx)
	if err != nil {
		return nil, err
	}
	cat := layering.Build([]layering.Input{{
		Layer: layering.Workspace, Source: "workspace", Skills: skills,
		Dir: func(s skill.Skill) string { return filepath.Join(d.dir, filepath.FromSlash(s.Path)) },
	}}, layering.Options{Hidden: d.hidden})
	cat.Problems = append(cat.Problems, problems...)
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, w := range cat.Winners {
		if d.archived[w.Skill.Name] {
			w.State = layering.Archived
		}
	}
	return cat, nil
}

func (d *dirWorkspace) Record(_ context.Context, name string, view bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if view {
		d.views[name]++
	} else {
		d.uses[name]++
	}
	return nil
}

func (d *dirWorkspace) Stamp() (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stamps++
	return strconv.Itoa(d.stamp), nil
}

// touch tells the server the workspace changed, as a sync landing does.
func (d *dirWorkspace) touch() {
	d.mu.Lock()
	d.stamp++
	d.mu.Unlock()
}

func (d *dirWorkspace) counts(name string) (uses, views int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.uses[name], d.views[name]
}

// writeSkill writes the skill folder <root>/<name>: a SKILL.md with the
// optional fields the tools hand on, body, and files.
func writeSkill(t testing.TB, root, name, description, body string, files map[string]string) {
	t.Helper()
	md := fmt.Sprintf("---\nname: %s\ndescription: %s\nlicense: MIT\nallowed-tools: Read Bash(git add:*)\nargument-hint: \"[file]\"\n---\n%s", name, description, body)
	all := map[string]string{"SKILL.md": md}
	maps.Copy(all, files)
	skilltest.Write(t, filepath.Join(root, name), all)
}

// fixture is the workspace most tests use: pdf with files, a hidden and an
// archived skill, and two more.
func fixture(t testing.TB) *dirWorkspace {
	ws := newDirWorkspace(t)
	writeSkill(t, ws.dir, "pdf", "Extract text and tables from PDF files", "# PDF\nRun scripts/extract.py FILE.\n", map[string]string{
		"scripts/extract.py": "print('extract')\n",
		"assets/logo.png":    "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		"reference/big.md":   strings.Repeat("é", 30000),
	})
	writeSkill(t, ws.dir, "docx", "Write Word documents", "# DOCX\n", nil)
	writeSkill(t, ws.dir, "release-notes", "Draft release notes from git history", "# Release notes\n", nil)
	writeSkill(t, ws.dir, "secret-tool", "A skill the config hides", "# hidden\n", nil)
	writeSkill(t, ws.dir, "old-skill", "A skill the curator archived", "# archived\n", nil)
	ws.hidden = []string{"secret-tool"}
	ws.archived["old-skill"] = true
	return ws
}

func newServer(t testing.TB, ws Workspace, opts Options) *Server {
	t.Helper()
	s, err := New(context.Background(), ws, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// connect opens a client session to s over an in-memory transport.
func connect(t testing.TB, s *Server) *sdk.ClientSession {
	t.Helper()
	return mcptest.Connect(t, s.MCP())
}

func TestMCPToolsHaveSchemas(t *testing.T) {
	t.Parallel()
	cs := connect(t, newServer(t, fixture(t), Options{}))
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
		if tool.InputSchema == nil || tool.OutputSchema == nil || tool.Description == "" {
			t.Errorf("tool %s lacks a schema or a description", tool.Name)
		}
	}
	if got := strings.Join(names, " "); got != "list_skills load_skill loaded_skills read_skill_file search_skills" {
		t.Errorf("tools = %s", got)
	}
	// search_skills' limit carries its bounds, and a call outside them is
	// refused before it runs.
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil || tool.Name != "search_skills" {
			continue
		}
		data, _ := json.Marshal(tool.InputSchema)
		var schema struct {
			Properties map[string]struct {
				Minimum, Maximum *float64
			}
		}
		json.Unmarshal(data, &schema)
		if l := schema.Properties["limit"]; l.Minimum == nil || *l.Minimum != 1 || l.Maximum == nil || *l.Maximum != 100 {
			t.Errorf("search_skills' schema: %s", data)
		}
	}
	for _, limit := range []int{0, 101} {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "search_skills", Arguments: map[string]any{"query": "pdf", "limit": limit}})
		if err == nil && !res.IsError {
			t.Errorf("search_skills with limit %d was answered", limit)
		}
	}
}

func TestMCPSearchAndList(t *testing.T) {
	t.Parallel()
	cs := connect(t, newServer(t, fixture(t), Options{}))
	var found searchOutput
	mcptest.Call(t, cs, "search_skills", map[string]any{"query": "pdf"}, &found)
	if len(found.Results) == 0 || found.Results[0].Name != "pdf" || found.Results[0].Layer != "workspace" {
		t.Errorf("search pdf = %+v", found)
	}
	found = searchOutput{}
	mcptest.Call(t, cs, "search_skills", map[string]any{"query": "d", "limit": 1}, &found)
	if len(found.Results) != 1 {
		t.Errorf("limit 1 gave %d results", len(found.Results))
	}
	// Hidden and archived skills match their own names, yet are not found.
	for _, q := range []string{"secret-tool", "old-skill", "hides", "archived"} {
		found = searchOutput{}
		mcptest.Call(t, cs, "search_skills", map[string]any{"query": q}, &found)
		if len(found.Results) != 0 || !strings.Contains(found.Message, "list_skills") {
			t.Errorf("search %q = %+v", q, found)
		}
	}
	mcptest.ToolError(t, mcptest.Call(t, cs, "search_skills", map[string]any{"query": "  "}, nil), "give a query")
	mcptest.ToolError(t, mcptest.Call(t, cs, "search_skills", map[string]any{}, nil), "query")

	var list listOutput
	mcptest.Call(t, cs, "list_skills", nil, &list)
	var names []string
	for _, s := range list.Skills {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, " "); got != "docx pdf release-notes" || list.Count != 3 {
		t.Errorf("list = %s (count %d)", got, list.Count)
	}
}

func TestMCPLoadSkill(t *testing.T) {
	t.Parallel()
	ws := fixture(t)
	cs := connect(t, newServer(t, ws, Options{}))
	var out loadOutput
	res := mcptest.Call(t, cs, "load_skill", map[string]any{"name": "PDF"}, &out)
	if res.IsError {
		t.Fatal(mcptest.Text(res))
	}
	if out.Name != "pdf" || out.Body != "# PDF\nRun scripts/extract.py FILE.\n" || out.AlreadyLoaded {
		t.Errorf("load = %+v", out)
	}
	if out.Frontmatter["license"] != "MIT" || out.Frontmatter["argument-hint"] != "[file]" ||
		fmt.Sprint(out.Frontmatter["allowed-tools"]) != "[Read Bash(git add:*)]" {
		t.Errorf("frontmatter = %v", out.Frontmatter)
	}
	var paths []string
	for _, f := range out.Files {
		paths = append(paths, f.Path)
	}
	if got := strings.Join(paths, " "); got != "SKILL.md assets/logo.png reference/big.md scripts/extract.py" {
		t.Errorf("files = %s", got)
	}
	if !strings.Contains(mcptest.Text(res), "scripts/extract.py") || !strings.HasSuffix(mcptest.Text(res), out.Body) {
		t.Errorf("text content does not carry the file tree and the body:\n%s", mcptest.Text(res))
	}
	if uses, views := ws.counts("pdf"); uses != 1 || views != 0 {
		t.Errorf("after one load: uses %d views %d, want 1 0", uses, views)
	}

	mcptest.ToolError(t, mcptest.Call(t, cs, "load_skill", map[string]any{"name": "pdff"}, nil), `no skill named "pdff"; did you mean pdf?`)
	mcptest.ToolError(t, mcptest.Call(t, cs, "load_skill", map[string]any{"name": "zzzzzzzz"}, nil), "search_skills or list_skills")
	mcptest.ToolError(t, mcptest.Call(t, cs, "load_skill", map[string]any{"name": ""}, nil), "give the name of a skill")
	// A megabyte of name is not sent back whole.
	if res := mcptest.Call(t, cs, "load_skill", map[string]any{"name": "pdf" + strings.Repeat("é", 1<<19)}, nil); !res.IsError || len(mcptest.Text(res)) > 400 {
		t.Errorf("a name of a megabyte: error %v, %d bytes of answer", res.IsError, len(mcptest.Text(res)))
	}
	mcptest.ToolError(t, mcptest.Call(t, cs, "load_skill", map[string]any{}, nil), "name")
	// Hidden and archived skills do not exist here, not even as a guess.
	for _, name := range []string{"secret-tool", "old-skill", "secret-tol"} {
		res := mcptest.Call(t, cs, "load_skill", map[string]any{"name": name}, nil)
		mcptest.ToolError(t, res, "no skill named")
		if strings.Contains(mcptest.Text(res), "secret-tool") && name != "secret-tool" || strings.Contains(mcptest.Text(res), "did you mean secret") {
			t.Errorf("a hidden skill leaks as a suggestion: %s", mcptest.Text(res))
		}
	}
	if uses, _ := ws.counts("pdf"); uses != 1 {
		t.Errorf("failed loads recorded uses: %d", uses)
	}
	if uses, _ := ws.counts("secret-tool"); uses != 0 {
		t.Errorf("a hidden skill was recorded: %d", uses)
	}
}

func TestMCPReadSkillFile(t *testing.T) {
	t.Parallel()
	ws := fixture(t)
	// A link to a sibling skill stays inside the workspace directory but
	// leads out of the skill; a link to /etc leads out of everything.
	if err := os.Symlink(filepath.Join(ws.dir, "docx", "SKILL.md"), filepath.Join(ws.dir, "pdf", "sibling.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(ws.dir, "pdf", "passwd")); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, newServer(t, ws, Options{}))
	var out readOutput
	res := mcptest.Call(t, cs, "read_skill_file", map[string]any{"name": "pdf", "path": "scripts/extract.py"}, &out)
	if res.IsError || out.Text != "print('extract')\n" || out.Size != 17 || out.Truncated || mcptest.Text(res) != out.Text {
		t.Errorf("read script = %+v (%s)", out, mcptest.Text(res))
	}
	out = readOutput{}
	mcptest.Call(t, cs, "read_skill_file", map[string]any{"name": "pdf", "path": "./scripts\\extract.py"}, &out)
	if out.Path != "scripts/extract.py" {
		t.Errorf("a path with ./ and a backslash read %q", out.Path)
	}

	// 30,000 two-byte characters: cut after 24,000 characters, not bytes.
	out = readOutput{}
	mcptest.Call(t, cs, "read_skill_file", map[string]any{"name": "pdf", "path": "reference/big.md"}, &out)
	body, marker, _ := strings.Cut(out.Text, "\n\n[truncated")
	if !out.Truncated || out.Size != 60000 || len([]rune(body)) != DefaultMaxChars || strings.Trim(body, "é") != "" ||
		!strings.Contains(marker, `the first 24000 characters are shown (bytes 0 to 48000 of 60000); 12000 bytes are left: read_skill_file(name="pdf", path="reference/big.md", offset=48000) reads on]`) ||
		out.NextOffset != 48000 || out.Remaining != 12000 {
		t.Errorf("truncation: truncated=%v size=%d chars=%d marker=%q", out.Truncated, out.Size, len([]rune(body)), marker)
	}

	out = readOutput{}
	res = mcptest.Call(t, cs, "read_skill_file", map[string]any{"name": "pdf", "path": "assets/logo.png"}, &out)
	if !out.Binary || out.Text != "" || out.MIMEType != "image/png" || !strings.Contains(mcptest.Text(res), "binary file") ||
		!strings.Contains(mcptest.Text(res), "skill://pdf/assets/logo.png") {
		t.Errorf("binary = %+v (%s)", out, mcptest.Text(res))
	}
	_, views := ws.counts("pdf")
	if views != 4 {
		t.Errorf("4 reads recorded %d views", views)
	}

	errorsWant := []struct {
		path string
		want []string
	}{
		{"../docx/SKILL.md", []string{"leads out of skill pdf"}},
		{"scripts/../../docx/SKILL.md", []string{"leads out of skill pdf"}},
		{"..\\docx\\SKILL.md", []string{"leads out of skill pdf"}},
		{"/etc/passwd", []string{"absolute"}},
		{"C:\\Windows\\win.ini", []string{"absolute"}},
		{"", []string{"give the path"}},
		{"SKILL.md\x00", []string{"holds a NUL", `\x00`}},
		{"sibling.md", []string{"symbolic link that leads out of the skill"}},
		{"passwd", []string{"symbolic link that leads out of the skill"}},
		{"scripts", []string{"is a directory", "load_skill"}},
		{"scripts/extrct.py", []string{"skill pdf has no file scripts/extrct.py", "its files include scripts/extract.py"}},
	}
	for _, c := range errorsWant {
		mcptest.ToolError(t, mcptest.Call(t, cs, "read_skill_file", map[string]any{"name": "pdf", "path": c.path}, nil), c.want...)
	}
	mcptest.ToolError(t, mcptest.Call(t, cs, "read_skill_file", map[string]any{"name": "secret-tool", "path": "SKILL.md"}, nil), "no skill named")
	mcptest.ToolError(t, mcptest.Call(t, cs, "read_skill_file", map[string]any{"name": "pdf"}, nil), "path")
	if _, after := ws.counts("pdf"); after != views {
		t.Errorf("failed reads recorded views: %d, want %d", after, views)
	}
}

func TestMCPLedger(t *testing.T) {
	t.Parallel()
	ws := newDirWorkspace(t)
	for i := range 22 {
		writeSkill(t, ws.dir, fmt.Sprintf("skill-%02d", i), "Skill number "+strconv.Itoa(i), fmt.Sprintf("# body %d\n", i), nil)
	}
	s := newServer(t, ws, Options{})
	cs := connect(t, s)
	load := func(cs *sdk.ClientSession, name string) loadOutput {
		t.Helper()
		var out loadOutput
		if res := mcptest.Call(t, cs, "load_skill", map[string]any{"name": name}, &out); res.IsError {
			t.Fatal(mcptest.Text(res))
		}
		return out
	}
	if out := load(cs, "skill-00"); out.AlreadyLoaded || out.Body == "" {
		t.Fatalf("first load = %+v", out)
	}
	if out := load(cs, "skill-00"); !out.AlreadyLoaded || out.Body != "" || !strings.Contains(out.Message, "already loaded") {
		t.Errorf("second load = %+v", out)
	}
	// The repeat was answered "already loaded": it is no new use.
	if uses, _ := ws.counts("skill-00"); uses != 1 {
		t.Errorf("two loads recorded %d uses, want 1", uses)
	}
	// Another connection has a ledger of its own.
	other := connect(t, s)
	if out := load(other, "skill-00"); out.AlreadyLoaded {
		t.Error("a second connection shares the first one's ledger")
	}

	// 21 more skills: the ledger keeps the 20 most recent, so skill-00 is
	// sent again in full. loaded_skills gives them back the most recent
	// first.
	for i := 1; i <= 21; i++ {
		load(cs, fmt.Sprintf("skill-%02d", i))
	}
	var loaded loadedOutput
	res := mcptest.Call(t, cs, "loaded_skills", nil, &loaded)
	if len(loaded.Skills) != DefaultLedgerSize || loaded.Skills[0].Name != "skill-21" || loaded.Skills[19].Name != "skill-02" ||
		loaded.Skills[0].Body != "# body 21\n" || loaded.Skills[0].Description != "Skill number 21" || len(loaded.Omitted) != 0 {
		t.Errorf("loaded_skills = %d skills, first %+v, omitted %v", len(loaded.Skills), loaded.Skills[0], loaded.Omitted)
	}
	if !strings.Contains(mcptest.Text(res), "<skill name=\"skill-21\">\n# body 21\n</skill>") {
		t.Errorf("loaded_skills text:\n%s", mcptest.Text(res))
	}
	if out := load(cs, "skill-00"); out.AlreadyLoaded {
		t.Error("a skill that fell out of the ledger was answered already loaded")
	}

	// A skill that changed since it was sent is sent again; one that is
	// gone is reported and leaves the ledger.
	writeSkill(t, ws.dir, "skill-21", "Skill number 21", "# body 21, revised\n", nil)
	if err := os.RemoveAll(filepath.Join(ws.dir, "skill-20")); err != nil {
		t.Fatal(err)
	}
	ws.touch()
	if out := load(cs, "skill-21"); out.AlreadyLoaded || out.Body != "# body 21, revised\n" {
		t.Errorf("changed skill = %+v", out)
	}
	loaded = loadedOutput{}
	res = mcptest.Call(t, cs, "loaded_skills", nil, &loaded)
	if strings.Join(loaded.Gone, " ") != "skill-20" || !strings.Contains(mcptest.Text(res), "no longer offered by the workspace (do not follow them any more): skill-20") {
		t.Errorf("gone = %v\n%s", loaded.Gone, mcptest.Text(res))
	}
	loaded = loadedOutput{}
	mcptest.Call(t, cs, "loaded_skills", nil, &loaded)
	if len(loaded.Gone) != 0 {
		t.Errorf("a gone skill stays in the ledger: %v", loaded.Gone)
	}

	fresh := connect(t, s)
	loaded = loadedOutput{}
	res = mcptest.Call(t, fresh, "loaded_skills", nil, &loaded)
	if len(loaded.Skills) != 0 || !strings.Contains(mcptest.Text(res), "no skill was loaded in this session") {
		t.Errorf("a new connection's ledger = %+v", loaded)
	}
}

func TestMCPReloadOnStamp(t *testing.T) {
	t.Parallel()
	ws := fixture(t)
	s := newServer(t, ws, Options{})
	cs := connect(t, s)
	listNames := func() string {
		var list listOutput
		mcptest.Call(t, cs, "list_skills", nil, &list)
		var names []string
		for _, s := range list.Skills {
			names = append(names, s.Name)
		}
		return strings.Join(names, " ")
	}
	before := listNames()
	reads := ws.reads
	for range 5 {
		mcptest.Call(t, cs, "search_skills", map[string]any{"query": "pdf"}, nil)
	}
	if ws.reads != reads {
		t.Errorf("the catalog was read %d times while the stamp stood still", ws.reads-reads)
	}
	writeSkill(t, ws.dir, "xlsx", "Spreadsheets", "# XLSX\n", nil)
	if got := listNames(); got != before {
		t.Errorf("the catalog changed without a new stamp: %s", got)
	}
	ws.touch()
	if got := listNames(); got != "docx pdf release-notes xlsx" {
		t.Errorf("after the stamp moved: %s", got)
	}
	if uris := resourceURIs(t, cs); !strings.Contains(uris, "skill://xlsx/SKILL.md") {
		t.Errorf("resources after reload: %s", uris)
	}
	ws.mu.Lock()
	ws.archived["xlsx"] = true
	ws.stamp++
	ws.mu.Unlock()
	if got := listNames(); got != before {
		t.Errorf("after archiving xlsx: %s", got)
	}
	if uris := resourceURIs(t, cs); strings.Contains(uris, "xlsx") {
		t.Errorf("an archived skill is still a resource: %s", uris)
	}
}

// TestMCPStampEvery checks that the server trusts a stamp for StampEvery:
// within it, requests neither read the stamp nor the catalog.
func TestMCPStampEvery(t *testing.T) {
	t.Parallel()
	ws := fixture(t)
	cs := connect(t, newServer(t, ws, Options{StampEvery: time.Hour}))
	stamps, reads := ws.stamps, ws.reads
	ws.touch()
	for range 5 {
		mcptest.Call(t, cs, "list_skills", nil, nil)
	}
	if ws.stamps != stamps || ws.reads != reads {
		t.Errorf("within StampEvery: %d more stamps, %d more catalog reads", ws.stamps-stamps, ws.reads-reads)
	}
	cs = connect(t, newServer(t, ws, Options{}))
	stamps = ws.stamps
	for range 5 {
		mcptest.Call(t, cs, "list_skills", nil, nil)
	}
	if ws.stamps != stamps+5 {
		t.Errorf("without StampEvery, 5 calls read the stamp %d times", ws.stamps-stamps)
	}
}

func resourceURIs(t *testing.T, cs *sdk.ClientSession) string {
	t.Helper()
	var uris []string
	for r, err := range cs.Resources(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URI)
	}
	return strings.Join(uris, " ")
}

func TestMCPResources(t *testing.T) {
	t.Parallel()
	ws := fixture(t)
	writeSkill(t, ws.dir, "odd name%", "A name that needs escaping in a URI", "# odd\n", map[string]string{"a b/c#d.txt": "hash"})
	cs := connect(t, newServer(t, ws, Options{}))
	ctx := context.Background()
	// A name that cannot be a URI host (a space, '%') comes after an
	// empty host.
	want := "skill:///odd%20name%25/SKILL.md skill://docx/SKILL.md skill://pdf/SKILL.md skill://release-notes/SKILL.md"
	if got := resourceURIs(t, cs); got != want {
		t.Errorf("resources = %s\nwant        %s", got, want)
	}
	read := func(uri string) (*sdk.ResourceContents, error) {
		res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err != nil {
			return nil, err
		}
		return res.Contents[0], nil
	}
	c, err := read("skill://pdf/SKILL.md")
	if err != nil || !strings.HasPrefix(c.Text, "---\nname: pdf\n") || c.MIMEType != "text/markdown" {
		t.Errorf("read SKILL.md = %+v, %v", c, err)
	}
	c, err = read("skill://pdf/assets/logo.png")
	if err != nil || c.Text != "" || len(c.Blob) != 16 || c.MIMEType != "image/png" {
		t.Errorf("read logo = %+v, %v", c, err)
	}
	c, err = read(resourceURI("odd name%", "a b/c#d.txt"))
	if err != nil || c.Text != "hash" {
		t.Errorf("read escaped = %+v, %v", c, err)
	}
	c, err = read("skill:///odd%20name%25/SKILL.md")
	if err != nil || !strings.Contains(c.Text, "name: odd name%") {
		t.Errorf("read the listed SKILL.md of a name after an empty host = %+v, %v", c, err)
	}
	// A large text file is cut where read_skill_file cuts it.
	c, err = read("skill://pdf/reference/big.md")
	if err != nil || !strings.HasPrefix(c.Text, strings.Repeat("é", DefaultMaxChars)+"\n\n[truncated: the first 24000 characters") {
		t.Errorf("read big.md = %d characters, %v", len([]rune(c.Text)), err)
	}
	for uri, want := range map[string]string{
		"skill://secret-tool/SKILL.md":     "not found",
		"skill://old-skill/SKILL.md":       "not found",
		"skill://pdf/nothing.md":           "not found",
		"skill://pdf/scripts":              "is a directory",
		"skill://pdf/../docx/SKILL.md":     "leads out of skill pdf",
		"skill://pdf/%2e%2e/docx/SKILL.md": "leads out of skill pdf",
		"skill://x/../../etc/passwd":       "not found",
		"skill://pdf/../../etc/passwd":     "leads out of skill pdf",
		"skill://pdf%zz/SKILL.md":          "not found",
		"file:///etc/passwd":               "",
	} {
		_, err := read(uri)
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), want) {
			t.Errorf("read %s: %v, want %q", uri, err, want)
		}
		if code := rpcCode(err); code != jsonrpc.CodeInvalidParams {
			t.Errorf("read %s: code %d, want %d (invalid params)", uri, code, jsonrpc.CodeInvalidParams)
		}
	}
	// Each read that answered is a view, as read_skill_file's are.
	if uses, views := ws.counts("pdf"); uses != 0 || views != 3 {
		t.Errorf("resource reads were recorded as %d uses, %d views; want 0 and 3", uses, views)
	}
}

// rpcCode is the JSON-RPC error code of a client call's error, 0 when it
// has none.
func rpcCode(err error) int64 {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return 0
}

func TestMCPPrompt(t *testing.T) {
	t.Parallel()
	cs := connect(t, newServer(t, fixture(t), Options{}))
	ctx := context.Background()
	res, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "available_skills"})
	if err != nil {
		t.Fatal(err)
	}
	block := res.Messages[0].Content.(*sdk.TextContent).Text
	if !strings.HasPrefix(block, "<available_skills>\n") || !strings.Contains(block, "<name>\npdf\n</name>") ||
		strings.Contains(block, "secret-tool") || strings.Contains(block, "old-skill") {
		t.Errorf("prompt:\n%s", block)
	}
	res, err = cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "available_skills", Arguments: map[string]string{"format": "json", "max_chars": "120"}})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Skills  []struct{ Name string }
		Omitted int
	}
	if err := json.Unmarshal([]byte(res.Messages[0].Content.(*sdk.TextContent).Text), &doc); err != nil || doc.Omitted == 0 {
		t.Errorf("json prompt within 120 characters: %+v, %v", doc, err)
	}
	if _, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "available_skills", Arguments: map[string]string{"format": "yaml"}}); err == nil ||
		!strings.Contains(err.Error(), "use xml or json") || rpcCode(err) != jsonrpc.CodeInvalidParams {
		t.Errorf("bad format: %v (code %d)", err, rpcCode(err))
	}
	for _, v := range []string{"many", "-1", "1e3"} {
		_, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "available_skills", Arguments: map[string]string{"max_chars": v}})
		if err == nil || !strings.Contains(err.Error(), "not a number of characters") || rpcCode(err) != jsonrpc.CodeInvalidParams {
			t.Errorf("max_chars %q: %v (code %d)", v, err, rpcCode(err))
		}
	}
}

// TestMCPRecordsExactlyOncePerCall runs loads and reads from many
// connections at once and checks every call counted once.
func TestMCPRecordsExactlyOncePerCall(t *testing.T) {
	t.Parallel()
	ws := fixture(t)
	s := newServer(t, ws, Options{})
	const clients, calls = 8, 10
	var wg sync.WaitGroup
	for range clients {
		cs := connect(t, s)
		wg.Go(func() {
			for range calls {
				for _, c := range []struct {
					tool string
					args map[string]any
				}{
					{"load_skill", map[string]any{"name": "pdf"}},
					{"read_skill_file", map[string]any{"name": "pdf", "path": "SKILL.md"}},
					{"load_skill", map[string]any{"name": "nope"}},
				} {
					if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: c.tool, Arguments: c.args}); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	// Each connection's first load is a use; its repeats are answered
	// "already loaded" and are not. Every read is a view.
	if uses, views := ws.counts("pdf"); uses != clients || views != clients*calls {
		t.Errorf("uses %d views %d, want %d and %d", uses, views, clients, clients*calls)
	}
}

func TestMCPNewFailsOnAnUnreadableWorkspace(t *testing.T) {
	t.Parallel()
	_, err := New(context.Background(), failingWorkspace{}, Options{})
	if err == nil || !strings.Contains(err.Error(), "read the catalog: no config") {
		t.Errorf("New = %v", err)
	}
}

type failingWorkspace struct{}

func (failingWorkspace) Catalog(context.Context) (*layering.Catalog, error) {
	return nil, fmt.Errorf("no config")
}
func (failingWorkspace) Record(context.Context, string, bool) error { return nil }
func (failingWorkspace) Stamp() (string, error)                     { return "1", nil }

// A search that finds nothing quotes its query clipped, as a lookup
// quotes a name: a query of a megabyte is not sent back whole.
func TestMCPSearchNoMatchClipsTheQuery(t *testing.T) {
	t.Parallel()
	cs := connect(t, newServer(t, fixture(t), Options{}))
	query := "zzz" + strings.Repeat("q", 1<<20)
	var found searchOutput
	res := mcptest.Call(t, cs, "search_skills", map[string]any{"query": query}, &found)
	if len(found.Results) != 0 || !strings.Contains(found.Message, "list_skills") {
		t.Fatalf("search = %+v", found)
	}
	if len(found.Message) > 1000 {
		t.Errorf("the message is %d bytes: it quotes the whole query", len(found.Message))
	}
	data, _ := json.Marshal(res)
	if len(data) > 4000 {
		t.Errorf("the answer is %d bytes for a query that matched nothing", len(data))
	}
}

// A resource that leads out of its skill through a symbolic link, or
// that is no regular file, is refused as invalid parameters, as a URI
// with .. is: not with a code a client cannot tell from a server fault.
func TestMCPResourceOutOfTheSkillIsInvalidParams(t *testing.T) {
	t.Parallel()
	ws := fixture(t)
	if err := os.Symlink("/etc/passwd", filepath.Join(ws.dir, "pdf", "passwd")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if err := os.Symlink("/etc", filepath.Join(ws.dir, "pdf", "etc")); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, newServer(t, ws, Options{}))
	for _, uri := range []string{"skill://pdf/passwd", "skill://pdf/etc/passwd"} {
		_, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: uri})
		if err == nil || !strings.Contains(err.Error(), "leads out of the skill") {
			t.Errorf("read %s: %v", uri, err)
		}
		if code := rpcCode(err); code != jsonrpc.CodeInvalidParams {
			t.Errorf("read %s: code %d, want %d (invalid params)", uri, code, jsonrpc.CodeInvalidParams)
		}
	}
	if _, views := ws.counts("pdf"); views != 0 {
		t.Errorf("refused reads were recorded as %d views", views)
	}
}

// stuckRecords is a workspace whose usage file is locked by another
// writer until release is closed: Record waits for it.
type stuckRecords struct {
	*dirWorkspace
	release chan struct{}
}

func (s stuckRecords) Record(ctx context.Context, name string, view bool) error {
	select {
	case <-s.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.dirWorkspace.Record(ctx, name, view)
}

// A tool's answer does not wait for the usage file's lock: a writer that
// holds it (for up to the two minutes writers wait for each other) held
// every load_skill and read_skill_file. The use is recorded once the
// lock is free, exactly once.
func TestMCPAnswerDoesNotWaitForTheUsageLock(t *testing.T) {
	t.Parallel()
	ws := stuckRecords{fixture(t), make(chan struct{})}
	held := time.AfterFunc(30*time.Second, func() { close(ws.release) })
	defer held.Stop()
	cs := connect(t, newServer(t, ws, Options{}))
	start := time.Now()
	var out loadOutput
	mcptest.Call(t, cs, "load_skill", map[string]any{"name": "pdf"}, &out)
	mcptest.Call(t, cs, "read_skill_file", map[string]any{"name": "pdf", "path": "SKILL.md"}, nil)
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("the answers waited %s for the usage file's lock", took.Round(time.Second))
	}
	if out.Body == "" {
		t.Errorf("load_skill = %+v", out)
	}
	if held.Stop() {
		close(ws.release)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		uses, views := ws.counts("pdf")
		if uses == 1 && views == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("recorded %d uses and %d views once the lock was free; want 1 and 1", uses, views)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A use answered before the usage file was free is still recorded when
// the client hangs up at once (printf ... | skillsync mcp): Run waits
// for it before it returns, and the process exits.
func TestMCPRunWaitsForTheRecordsAnsweredBefore(t *testing.T) {
	t.Parallel()
	ws := stuckRecords{fixture(t), make(chan struct{})}
	s := newServer(t, ws, Options{})
	ct, st := sdk.NewInMemoryTransports()
	ran := make(chan error, 1)
	go func() { ran <- s.Run(context.Background(), st) }()
	cs, err := mcptest.NewClient().Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	mcptest.Call(t, cs, "load_skill", map[string]any{"name": "pdf"}, nil)
	cs.Close()
	select {
	case err := <-ran:
		t.Fatalf("Run returned (%v) before the use was recorded", err)
	case <-time.After(500 * time.Millisecond):
	}
	close(ws.release)
	select {
	case <-ran:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return once the use was recorded")
	}
	if uses, _ := ws.counts("pdf"); uses != 1 {
		t.Errorf("uses %d, want 1", uses)
	}
}

// A use still waiting for the usage file when the server is stopped
// (SIGTERM cancels Run's context) is recorded before Run returns, as one
// at the end of the input is: the process exits once Run returns.
// Before, the cancelled context cut the wait short and the use was lost.
func TestMCPRunWaitsForTheRecordsWhenStopped(t *testing.T) {
	t.Parallel()
	ws := stuckRecords{fixture(t), make(chan struct{})}
	s := newServer(t, ws, Options{})
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	ct, st := sdk.NewInMemoryTransports()
	ran := make(chan error, 1)
	go func() { ran <- s.Run(ctx, st) }()
	cs, err := mcptest.NewClient().Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	mcptest.Call(t, cs, "load_skill", map[string]any{"name": "pdf"}, nil)
	stop()
	select {
	case err := <-ran:
		t.Fatalf("Run returned (%v) when stopped, before the use was recorded", err)
	case <-time.After(500 * time.Millisecond):
	}
	close(ws.release)
	select {
	case err := <-ran:
		if err != nil {
			t.Errorf("Run stopped by its context: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return once the use was recorded")
	}
	if uses, _ := ws.counts("pdf"); uses != 1 {
		t.Errorf("uses %d, want 1", uses)
	}
}
