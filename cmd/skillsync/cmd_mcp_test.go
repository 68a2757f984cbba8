package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillsync/skillsync/internal/httpserver"
	"github.com/skillsync/skillsync/internal/mcptest"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// mcpCommand is the built binary running skillsync mcp in dir, with the
// test's home as run gives it.
func mcpCommand(t testing.TB, dir string, args ...string) (*exec.Cmd, *skilltest.Buffer) {
	t.Helper()
	return command(t, dir, append([]string{"mcp"}, args...)...)
}

// command is the built binary running skillsync with args in dir, with
// the test's home as run gives it; stderr is kept in the buffer.
func command(t testing.TB, dir string, args ...string) (*exec.Cmd, *skilltest.Buffer) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Dir = dir
	h, _ := homes.LoadOrStore(t, t.TempDir())
	home := h.(string)
	cmd.Env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "PATH=" + os.Getenv("PATH")}
	stderr := &skilltest.Buffer{}
	cmd.Stderr = stderr
	return cmd, stderr
}

// startStdio runs skillsync mcp in dir and connects the SDK's client to
// it over the process's stdin and stdout. Closing the session must end
// the process with exit 0.
func startStdio(t testing.TB, dir string) *sdk.ClientSession {
	t.Helper()
	cmd, stderr := mcpCommand(t, dir)
	cs, err := mcptest.NewClient().Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr: %s", err, stderr)
	}
	t.Cleanup(func() {
		if err := cs.Close(); err != nil {
			t.Errorf("skillsync mcp did not end cleanly when its stdin closed: %v\nstderr: %s", err, stderr)
		} else if t.Failed() {
			t.Logf("skillsync mcp stderr:\n%s", stderr)
		}
	})
	return cs
}

type mcpSkill struct {
	Name, Description, Layer, Source string
	Body                             string
	AlreadyLoaded                    bool `json:"already_loaded"`
	Files                            []struct{ Path string }
}

func listNames(t *testing.T, cs *sdk.ClientSession) string {
	t.Helper()
	var out struct{ Skills []mcpSkill }
	mcptest.Call(t, cs, "list_skills", nil, &out)
	var names []string
	for _, s := range out.Skills {
		names = append(names, s.Name)
	}
	return strings.Join(names, " ")
}

// usageCounts reads the workspace's usage file as the curator keeps it and
// returns the counts of name, whether keyed by bare name or by copy
// (layer:source/name).
func usageCounts(t *testing.T, ws, name string) (uses, views int) {
	t.Helper()
	for key, s := range usageOf(t, ws) {
		if key == name || strings.HasSuffix(key, "/"+name) {
			uses += s.UseCount
			views += s.ViewCount
		}
	}
	return uses, views
}

// archive marks a skill archived in the usage file, as curate does.
func archive(t *testing.T, ws, name string) {
	t.Helper()
	usage := fmt.Sprintf(`{"version":1,"skills":{%q:{"use_count":0,"view_count":0,"state":"archived"}}}`, name)
	if err := os.WriteFile(filepath.Join(ws, "skills", ".usage.json"), []byte(usage), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestMCPStdio(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	archive(t, ws, "manual")
	cs := startStdio(t, ws)

	if got := listNames(t, cs); got != "pdf release-notes skillsync writing-skills" {
		t.Errorf("list_skills = %s (hidden-one, manual and broken must not be there)", got)
	}
	var found struct{ Results []mcpSkill }
	mcptest.Call(t, cs, "search_skills", map[string]any{"query": "release notes", "limit": 5}, &found)
	if len(found.Results) == 0 || found.Results[0].Name != "release-notes" || found.Results[0].Source != "team" {
		t.Errorf("search = %+v", found.Results)
	}
	mcptest.ToolError(t, mcptest.Call(t, cs, "search_skills", map[string]any{"query": ""}, nil), "give a query")

	var pdf mcpSkill
	res := mcptest.Call(t, cs, "load_skill", map[string]any{"name": "pdf"}, &pdf)
	if pdf.Layer != "user" || pdf.Source != "user" || pdf.Body == "" || pdf.AlreadyLoaded || !strings.Contains(mcptest.Text(res), pdf.Body) {
		t.Errorf("load pdf = %+v", pdf)
	}
	pdf = mcpSkill{}
	mcptest.Call(t, cs, "load_skill", map[string]any{"name": "pdf"}, &pdf)
	if !pdf.AlreadyLoaded || pdf.Body != "" {
		t.Errorf("second load = %+v", pdf)
	}
	var notes mcpSkill
	mcptest.Call(t, cs, "load_skill", map[string]any{"name": "release-notes"}, &notes)
	if len(notes.Files) != 2 || notes.Files[1].Path != "scripts/draft.sh" {
		t.Errorf("release-notes files = %+v", notes.Files)
	}
	mcptest.ToolError(t, mcptest.Call(t, cs, "load_skill", map[string]any{"name": "pdff"}, nil), `no skill named "pdff"; did you mean pdf?`)
	mcptest.ToolError(t, mcptest.Call(t, cs, "load_skill", map[string]any{"name": "hidden-one"}, nil), `no skill named "hidden-one"`)
	mcptest.ToolError(t, mcptest.Call(t, cs, "load_skill", map[string]any{"name": "manual"}, nil), `no skill named "manual"`)

	var file struct {
		Text string
		Size int64
	}
	mcptest.Call(t, cs, "read_skill_file", map[string]any{"name": "release-notes", "path": "scripts/draft.sh"}, &file)
	script, _ := os.ReadFile(filepath.Join(ws, "team", "release-notes", "scripts", "draft.sh"))
	if file.Text != string(script) || file.Size != int64(len(script)) {
		t.Errorf("read draft.sh = %+v", file)
	}
	mcptest.ToolError(t, mcptest.Call(t, cs, "read_skill_file", map[string]any{"name": "release-notes", "path": "../pdf/SKILL.md"}, nil), "leads out of skill release-notes")
	mcptest.ToolError(t, mcptest.Call(t, cs, "read_skill_file", map[string]any{"name": "release-notes", "path": "/etc/passwd"}, nil), "absolute")
	mcptest.ToolError(t, mcptest.Call(t, cs, "read_skill_file", map[string]any{"name": "release-notes", "path": "scripts/nope.sh"}, nil),
		"skill release-notes has no file scripts/nope.sh; its files include scripts/draft.sh")
	mcptest.ToolError(t, mcptest.Call(t, cs, "read_skill_file", map[string]any{"name": "hidden-one", "path": "SKILL.md"}, nil), "no skill named")

	var loaded struct{ Skills []mcpSkill }
	mcptest.Call(t, cs, "loaded_skills", nil, &loaded)
	// The most recently loaded first.
	if len(loaded.Skills) != 2 || loaded.Skills[0].Name != "release-notes" || loaded.Skills[1].Name != "pdf" || loaded.Skills[1].Body == "" {
		t.Errorf("loaded_skills = %+v", loaded.Skills)
	}

	ctx := context.Background()
	var uris []string
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URI)
	}
	if got := strings.Join(uris, " "); got != "skill://pdf/SKILL.md skill://release-notes/SKILL.md skill://skillsync/SKILL.md skill://writing-skills/SKILL.md" {
		t.Errorf("resources = %s", got)
	}
	rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "skill://release-notes/scripts/draft.sh"})
	if err != nil || rr.Contents[0].Text != string(script) {
		t.Errorf("read resource = %v, %v", rr, err)
	}
	if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "skill://hidden-one/SKILL.md"}); err == nil {
		t.Error("a hidden skill is readable as a resource")
	}
	prompt, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "available_skills"})
	if err != nil {
		t.Fatal(err)
	}
	block := prompt.Messages[0].Content.(*sdk.TextContent).Text
	if !strings.Contains(block, "<name>\nrelease-notes\n</name>") || strings.Contains(block, "hidden-one") || strings.Contains(block, "<name>\nmanual") {
		t.Errorf("prompt:\n%s", block)
	}

	// Two loads of pdf (the second answered "already loaded") are one use;
	// a read_skill_file and a resource read are two views; failed calls
	// count nothing.
	if uses, views := usageCounts(t, ws, "pdf"); uses != 1 || views != 0 {
		t.Errorf("pdf: %d uses %d views, want 1 0", uses, views)
	}
	if uses, views := usageCounts(t, ws, "release-notes"); uses != 1 || views != 2 {
		t.Errorf("release-notes: %d uses %d views, want 1 2", uses, views)
	}
	if uses, views := usageCounts(t, ws, "hidden-one"); uses+views != 0 {
		t.Errorf("hidden-one was recorded: %d %d", uses, views)
	}
}

func TestMCPReloadsAfterSync(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	cs := startStdio(t, ws)
	if got := listNames(t, cs); strings.Contains(got, "xlsx") {
		t.Fatalf("xlsx before it exists: %s", got)
	}

	// A skill added to the team source reaches the workspace with a sync,
	// which the server sees without a restart.
	skilltest.WriteFile(t, filepath.Join(ws, "team", "xlsx", "SKILL.md"), "---\nname: xlsx\ndescription: Edit spreadsheets\n---\n# XLSX\n")
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	eventually(t, "xlsx in list_skills after a sync", func() bool { return strings.Contains(listNames(t, cs), "xlsx") })
	var x mcpSkill
	mcptest.Call(t, cs, "load_skill", map[string]any{"name": "xlsx"}, &x)
	if x.Body != "# XLSX\n" || x.Source != "team" {
		t.Errorf("load xlsx after sync = %+v", x)
	}

	// The workspace layer is read in place: a new skill there is seen, and
	// an edit of one, without a sync.
	skilltest.WriteFile(t, filepath.Join(ws, "skills", "notes", "SKILL.md"), "---\nname: notes\ndescription: Take notes\n---\n# v1\n")
	eventually(t, "a new workspace skill", func() bool { return slices.Contains(strings.Fields(listNames(t, cs)), "notes") })
	skilltest.WriteFile(t, filepath.Join(ws, "skills", "notes", "SKILL.md"), "---\nname: notes\ndescription: Take notes\n---\n# v2, longer\n")
	eventually(t, "an edited workspace skill", func() bool {
		x = mcpSkill{}
		mcptest.Call(t, cs, "load_skill", map[string]any{"name": "notes"}, &x)
		return x.Body == "# v2, longer\n"
	})

	// A skill the curator archives disappears.
	archive(t, ws, "notes")
	if err := os.Rename(filepath.Join(ws, "skills", "notes"), filepath.Join(ws, "skills", ".archive-notes")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "an archived skill gone", func() bool { return !slices.Contains(strings.Fields(listNames(t, cs)), "notes") })

	// An edit of the config is read at the next call, as the daemon
	// reloads its own: a skill it hides goes, and comes back when it no
	// longer does. Before, the config read at the start held until a
	// restart.
	path := filepath.Join(ws, "skillsync.yaml")
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	hidden := strings.Replace(string(text), "hidden: [hidden-one]", "hidden: [hidden-one, xlsx]", 1)
	skilltest.WriteFile(t, path, hidden)
	eventually(t, "a skill the edited config hides gone", func() bool { return !slices.Contains(strings.Fields(listNames(t, cs)), "xlsx") })
	skilltest.WriteFile(t, path, string(text))
	eventually(t, "a skill the config no longer hides back", func() bool { return slices.Contains(strings.Fields(listNames(t, cs)), "xlsx") })
}

// eventually calls done until it reports true: the server looks for a
// changed workspace once a second. It gives up after half a minute.
func eventually(t *testing.T, what string, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if done() {
			return
		}
	}
	t.Fatalf("never saw %s", what)
}

// TestMCPUsageUnderConcurrentClients runs 8 servers at once on one
// workspace, each with its own client loading and reading skills, and
// checks that the usage file counted every call exactly once.
func TestMCPUsageUnderConcurrentClients(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	const clients, calls = 8, 5
	sessions := make([]*sdk.ClientSession, clients)
	for i := range sessions {
		sessions[i] = startStdio(t, ws)
	}
	var wg sync.WaitGroup
	for _, cs := range sessions {
		wg.Go(func() {
			for range calls {
				for _, p := range []*sdk.CallToolParams{
					{Name: "load_skill", Arguments: map[string]any{"name": "pdf"}},
					{Name: "read_skill_file", Arguments: map[string]any{"name": "release-notes", "path": "SKILL.md"}},
					{Name: "load_skill", Arguments: map[string]any{"name": "pdff"}},
				} {
					if _, err := cs.CallTool(context.Background(), p); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	// Each server's first load of pdf is a use; its repeats are answered
	// "already loaded" and are not. Every read is a view.
	if uses, views := usageCounts(t, ws, "pdf"); uses != clients || views != 0 {
		t.Errorf("pdf: %d uses %d views, want %d 0", uses, views, clients)
	}
	if uses, views := usageCounts(t, ws, "release-notes"); uses != 0 || views != clients*calls {
		t.Errorf("release-notes: %d uses %d views, want 0 %d", uses, views, clients*calls)
	}
}

var servingLine = regexp.MustCompile(`serving (http://127\.0\.0\.1:\d+/mcp)`)

func connectHTTP(t *testing.T, endpoint string) *sdk.ClientSession {
	t.Helper()
	cs, err := mcptest.NewClient().Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestMCPOverHTTP(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	endpoint := startServer(t, ws, servingLine, "mcp", "--http", "127.0.0.1:0")
	a, b := connectHTTP(t, endpoint), connectHTTP(t, endpoint)

	if got := listNames(t, a); got != "manual pdf release-notes skillsync writing-skills" {
		t.Errorf("list over HTTP = %s", got)
	}
	var s mcpSkill
	mcptest.Call(t, a, "load_skill", map[string]any{"name": "pdf"}, &s)
	if s.AlreadyLoaded || s.Body == "" {
		t.Errorf("first load = %+v", s)
	}
	s = mcpSkill{}
	mcptest.Call(t, a, "load_skill", map[string]any{"name": "pdf"}, &s)
	if !s.AlreadyLoaded {
		t.Error("the second load in one HTTP session was sent again")
	}
	s = mcpSkill{}
	mcptest.Call(t, b, "load_skill", map[string]any{"name": "pdf"}, &s)
	if s.AlreadyLoaded || s.Body == "" {
		t.Error("a second HTTP session shares the first one's ledger")
	}
	var loaded struct{ Skills []mcpSkill }
	mcptest.Call(t, b, "loaded_skills", nil, &loaded)
	if len(loaded.Skills) != 1 || loaded.Skills[0].Name != "pdf" {
		t.Errorf("loaded_skills over HTTP = %+v", loaded)
	}
	mcptest.ToolError(t, mcptest.Call(t, a, "load_skill", map[string]any{"name": "pdff"}, nil), "did you mean pdf?")
	mcptest.ToolError(t, mcptest.Call(t, a, "read_skill_file", map[string]any{"name": "pdf", "path": "../../skillsync.yaml"}, nil), "leads out of skill pdf")
	var file struct{ Text string }
	mcptest.Call(t, b, "read_skill_file", map[string]any{"name": "release-notes", "path": "scripts/draft.sh"}, &file)
	if file.Text == "" {
		t.Error("read over HTTP returned no text")
	}

	// More sessions than a page server's connections (64), each holding
	// its event stream, all answered.
	for i := range 70 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cs, err := mcptest.NewClient().Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint}, nil)
		if err == nil {
			t.Cleanup(func() { cs.Close() })
			_, err = cs.ListTools(ctx, nil)
		}
		cancel()
		if err != nil {
			t.Fatalf("session %d: %v", i+1, err)
		}
	}

	// Sessions at once on one server count exactly too.
	var wg sync.WaitGroup
	for range 4 {
		cs := connectHTTP(t, endpoint)
		wg.Go(func() {
			for range 3 {
				if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "load_skill", Arguments: map[string]any{"name": "pdf"}}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	// One use per session that loaded pdf (a, b and the four): a repeat
	// in the same session is answered "already loaded" and not counted.
	if uses, views := usageCounts(t, ws, "pdf"); uses != 2+4 || views != 0 {
		t.Errorf("pdf over HTTP: %d uses %d views, want 6 0", uses, views)
	}
	if _, views := usageCounts(t, ws, "release-notes"); views != 1 {
		t.Errorf("release-notes over HTTP: %d views, want 1", views)
	}
}

func TestMCPRefusesAnOpenAddress(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, addr := range []string{"0.0.0.0:8765", ":8765", "example.com:80", "nonsense"} {
		r := run(t, dir, "mcp", "--http", addr)
		if r.code != exitUsage || !strings.Contains(r.stderr, "127.0.0.1:PORT") {
			t.Errorf("mcp --http %s: exit %d\n%s", addr, r.code, r.stderr)
		}
	}
}

// BenchmarkMCPSearchOverStdio measures a search_skills round trip between
// the SDK's client and a skillsync mcp process over its stdin and stdout,
// with 10,000 skills in a marketplace source.
//
//	go test ./cmd/skillsync/ -run '^$' -bench MCPSearchOverStdio -benchtime 2000x
func BenchmarkMCPSearchOverStdio(b *testing.B) {
	ws := b.TempDir()
	topics := []string{"spreadsheet", "release", "kubernetes", "terraform", "invoice", "docker", "postgres", "graphql", "security", "markdown"}
	for i := range 10000 {
		name := fmt.Sprintf("%s-helper-%05d", topics[i%len(topics)], i)
		desc := fmt.Sprintf("Work with %s projects: instructions and scripts for team %d", topics[i%len(topics)], i%97)
		if i%1000 == 0 {
			name, desc = fmt.Sprintf("pdf-tools-%05d", i), "Extract text and tables from PDF files, fill PDF forms"
		}
		skilltest.Skill(b, filepath.Join(ws, "big"), name, desc, nil)
	}
	if err := os.WriteFile(filepath.Join(ws, "skillsync.yaml"), []byte("repositories:\n  - name: big\n    dir: big\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	cs := startStdio(b, ws)
	ctx := context.Background()
	params := &sdk.CallToolParams{Name: "search_skills", Arguments: map[string]any{"query": "pdf forms", "limit": 10}}
	if res, err := cs.CallTool(ctx, params); err != nil || res.IsError || !strings.Contains(mcptest.Text(res), "pdf-tools-00000") {
		b.Fatalf("search: %v %v", err, res)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := cs.CallTool(ctx, params); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMCPOverHTTPRefusesOtherSites: a browser's POST from another site's
// page is refused before the SDK reads it; a client that is no browser
// (no Sec-Fetch-Site, no Origin) is served.
func TestMCPOverHTTPRefusesOtherSites(t *testing.T) {
	t.Parallel()
	endpoint := startServer(t, workspace(t), servingLine, "mcp", "--http", "127.0.0.1:0")
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, tt := range []struct {
		name    string
		headers map[string]string
		want    int
	}{
		{"cross-site fetch", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"another origin", map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{"no browser", nil, http.StatusOK},
	} {
		req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(initialize))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range tt.headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s: %s, want %d", tt.name, resp.Status, tt.want)
		}
	}
}

// TestMCPHTTPBodyDeadlineCoversEveryPath: a client that sends a request's
// headers and not its body is let go after the deadline wherever the
// request goes, not only when the SDK reads the body: net/http reads
// what is left of a body after a 404 or a 403 too.
func TestMCPHTTPBodyDeadlineCoversEveryPath(t *testing.T) {
	t.Parallel()
	readsBody := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "the body did not arrive", http.StatusRequestTimeout)
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs, ln := httpserver.New(mcpHandler(readsBody, 200*time.Millisecond), ln, httpserver.Limits{Conns: 4})
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	for _, tt := range []struct{ name, path, header string }{
		{"the endpoint", "/mcp", ""},
		{"another path", "/elsewhere", ""},
		{"another site's page", "/mcp", "Sec-Fetch-Site: cross-site\r\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{}", tt.path, tt.header)
			closed := make(chan error, 1)
			go func() {
				_, err := io.Copy(io.Discard, c) // an answer, then the close
				closed <- err
			}()
			select {
			case <-closed:
			case <-time.After(10 * time.Second):
				t.Fatalf("POST %s whose body stopped still holds its connection", tt.path)
			}
		})
	}
}
